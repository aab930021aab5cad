// Multi-threaded CSV / Parquet -> sparse::Batch loader (data_config.dataset_type CsvDataset or
// ParquetDataset).
//
// The input is split over loader workers as data/dataset_sources.h describes (CSV: whole files
// round-robin; Parquet: contiguous row ranges over world_size x num_workers readers). Each worker
// thread reads its share in order, cuts exactly batch_size rows (batches span files), runs
// FeatureParser::parse and keeps up to kPrefetchDepth parsed batches in its own queue; next()
// takes batches round-robin over workers, skipping exhausted ones, so the order is deterministic
// for a given num_workers.
//
// Batch size: data_config.batch_size in kTrain; eval_batch_size (if set) else batch_size in kEval
// and kPredict. The last short batch of each worker is kept, except in kTrain when drop_remainder
// is set (dropping rows in eval would bias the metrics,
// in predict it would lose predictions). Only kTrain shuffles (data_config.shuffle: batches in a
// random order within windows of shuffle_buffer_size, data/shuffle_batch_source.h; the order is
// drawn from TORCH_MANUAL_SEED, the shard's epoch and the data). With batch_cost_size, batches
// are cut by cost (data/cost_batch_source.h).
//
// kPredict: label_fields and sample_weight_fields are neither read nor required (the input may
// lack them; present ones are ignored); batches have no labels / sample weights. Feature columns
// are required as in the other modes.
//
// Reserved columns (any mode, meant for predict): input columns passed through unchanged with
// each batch, resolved as data/reserved_columns.h describes (names, "ALL_COLUMNS",
// "ALL_EFFECTIVE_COLUMNS" = parser().input_columns()). LoadedBatch::reserved holds them for
// exactly the rows of the batch, in the resolved order: CSV gives StringColumns, Parquet
// TypedColumns with the file's types. They are read by the same worker, in the same RecordBatch,
// as the features, so rows stay aligned also when a batch spans files. A column missing from an
// input file is a DataError naming the column, the file and its columns.
//
// Resume: every LoadedBatch carries the data::ReadPosition after it. A loader built with that
// position and the same num_workers continues with exactly the next batch; with another
// num_workers it reads every remaining row exactly once, starting at worker 0 (see
// data/read_position.h).
//
// Errors: a DataError (or any exception) raised on a worker is rethrown by next() with its
// original type, at the point of that worker's failed batch. The destructor stops and joins the
// workers, also mid-stream.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/read_position.h"
#include "feature/feature_parser.h"
#include "sparse/batch.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::data {
template <typename T>
class ParallelLoader;
}

namespace tzrec::feature {

enum class Mode { kTrain, kEval, kPredict };

struct LoadedBatch {
  sparse::Batch batch;
  data::ReadPosition position;  // position after this batch
  // The reserved columns of the batch's rows (num_rows() == batch.batch_size); empty (no
  // columns, no rows) when none were requested.
  data::RecordBatch reserved;
  // Streams: the latest event time of the batch's rows (seconds since the Unix epoch), else -1.
  double data_timestamp = -1.0;
};

struct ParsedBatch;  // a worker's result: the parsed batch and its reserved columns

// This process's share of the data in distributed runs (RANK / WORLD_SIZE).
struct LoaderShard {
  int rank = 0;
  int world_size = 1;
  int64_t epoch = 0;  // training: the epoch read (each draws another shuffle order)
};

class BatchLoader {
 public:
  static constexpr int kPrefetchDepth = 2;

  // reserved_columns: the request (names and special values) passed through with each batch.
  // Throws DataError for missing files / unmatched globs / a resume position for other files /
  // missing reserved columns, ConfigError / NotSupportedError for unusable data_config or
  // feature settings.
  BatchLoader(const protos::EasyRecConfig& config, const std::string& input_path, Mode mode,
              const data::ReadPosition* resume = nullptr, LoaderShard shard = {},
              const std::vector<std::string>& reserved_columns = {});
  ~BatchLoader();
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  // The next batch, or nullopt at the end of the pass.
  std::optional<LoadedBatch> next();

  int num_workers() const { return num_workers_; }
  int64_t batch_size() const { return batch_size_; }
  const std::vector<std::string>& files() const { return files_; }
  const FeatureParser& parser() const { return *parser_; }
  // The resolved reserved columns, in LoadedBatch::reserved order.
  const std::vector<std::string>& reserved_columns() const { return reserved_columns_; }

 private:
  std::shared_ptr<const FeatureParser> parser_;
  std::vector<std::string> files_;
  std::vector<std::string> reserved_columns_;
  int num_workers_ = 1;
  int64_t batch_size_ = 0;
  std::unique_ptr<data::ParallelLoader<ParsedBatch>> loader_;
};

}  // namespace tzrec::feature
