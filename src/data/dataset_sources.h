// The per-worker batch sources of a dataset (data_config.dataset_type), with the read position
// they start from (no torch).
//
// CsvDataset: files round-robin over workers, files[global_worker :: total_workers] like
//   TorchEasyRec (docs/tzrec-compatibility.md §6.3; num_workers 0 -> 1; reduced to the files per
//   rank when there are fewer files); resumable by file prefixes (ReadPosition kFilePrefix).
// ParquetDataset: all rows of all files split into contiguous row ranges over
//   world_size x num_workers readers (the first total % n get one extra row,
//   docs/tzrec-compatibility.md §6.3); resumable by consumed rows per worker (ReadPosition
//   kRowRanges), also with another number of workers (the remaining rows are re-split).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/batch_source.h"
#include "data/csv_reader.h"
#include "data/input_fields.h"
#include "data/read_position.h"
#include "tzrec/protos/data.pb.h"

namespace tzrec::data {

struct BatchOptions {
  int64_t batch_size = 1;
  bool drop_remainder = false;
  // data_config.shuffle (training): batches per shuffle window (shuffle_batch_source.h); 0: in
  // order. shuffle_seed mixes the run's seed and the epoch.
  int64_t shuffle_window = 0;
  uint64_t shuffle_seed = 0;
};

struct DatasetSources {
  std::vector<std::string> files;  // the expanded input path
  std::vector<std::unique_ptr<BatchSource>> sources;  // one per loader worker
  ReadPosition start;                                 // position the sources start from
};

// The CsvBatchReader options of data_config (delimiter, with_header, input_fields /
// input_fields_str). Throws ConfigError for a delimiter that is not one byte or an empty name.
CsvOptions csv_options(const protos::DataConfig& data_config);

// Builds the sources for `columns` (in output order) of the files of `input_path` (comma list,
// globs). `log_worker_changes`: log at info level (else debug) when num_workers is reduced.
// Throws DataError for missing files / unmatched globs / unreadable or unusable Parquet files /
// a resume position written for other inputs, ConfigError / NotSupportedError for unusable
// data_config settings.
DatasetSources make_dataset_sources(const protos::DataConfig& data_config,
                                    const std::string& input_path,
                                    const std::vector<std::string>& columns,
                                    const BatchOptions& batch, const ReadPosition* resume,
                                    int rank, int world_size, bool log_worker_changes);

}  // namespace tzrec::data
