#include "data/dataset_sources.h"

#include <algorithm>

#include "base/error.h"
#include "base/logging.h"
#include "base/text.h"
#include "config/stream_batches.h"
#include "data/cost_batch_source.h"
#include "data/csv_reader.h"
#include "data/input_files.h"
#include "data/kafka_dataset.h"
#include "data/parquet_batch_reader.h"
#include "data/parquet_files.h"
#include "data/shuffle_batch_source.h"

namespace tzrec::data {
namespace {

std::string printable_delimiter(const std::string& d) {
  std::string out;
  for (char c : d) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u >= 0x7f) ? fmt::format("\\x{:02x}", u) : std::string(1, c);
  }
  return out;
}

DatasetSources csv_sources(const protos::DataConfig& dc, std::vector<std::string> files,
                           const std::vector<std::string>& columns, const BatchOptions& batch,
                           const ReadPosition* resume, int rank, int world_size,
                           bool log_worker_changes) {
  const CsvOptions options = csv_options(dc);
  DatasetSources out;
  out.files = std::move(files);
  const int workers =
      effective_num_workers(static_cast<int>(dc.num_workers()), out.files.size(), world_size);
  if (static_cast<int>(dc.num_workers()) > workers) {
    const auto message =
        fmt::format("data_config.num_workers reset to {}: {} input files for {} rank(s)", workers,
                    out.files.size(), world_size);
    if (log_worker_changes) {
      log::info("{}", message);
    } else {
      log::debug("{}", message);
    }
  }
  if (resume && resume->kind != PositionKind::kFilePrefix) {
    throw DataError(
        "cannot resume: the saved data position was written for ParquetDataset input, but "
        "data_config.dataset_type is CsvDataset; resume with the same dataset type");
  }
  const auto plan = resume ? resume->plan(out.files, workers, rank, world_size)
                           : plan_fresh(out.files, workers, rank, world_size);
  out.start = resume ? resume->for_workers(workers, rank, world_size)
                     : ReadPosition::start(out.files, workers);
  for (const auto& slices : plan) {
    out.sources.push_back(std::make_unique<CsvBatchReader>(
        options, columns, slices, batch.batch_size, batch.drop_remainder));
  }
  return out;
}

DatasetSources parquet_sources(const protos::DataConfig& dc, std::vector<std::string> files,
                               const std::vector<std::string>& columns, const BatchOptions& batch,
                               const ReadPosition* resume, int rank, int world_size) {
  auto parquet = ParquetFiles::open(files);
  parquet->check_columns(columns);
  DatasetSources out;
  out.files = std::move(files);
  // Rows, not files, are split: every worker gets rows whatever the number of files.
  const int workers = std::max(1, static_cast<int>(dc.num_workers()));
  if (resume) {
    if (resume->kind != PositionKind::kRowRanges) {
      throw DataError(
          "cannot resume: the saved data position was written for CsvDataset input, but "
          "data_config.dataset_type is ParquetDataset; resume with the same dataset type");
    }
    resume->check_files(out.files, parquet->file_rows());
    out.start = resume->for_workers(workers, rank, world_size);
  } else {
    out.start = ReadPosition::start_row_ranges(out.files, parquet->file_rows(), workers, rank,
                                               world_size);
  }
  for (auto& ranges : out.start.remaining_ranges()) {
    out.sources.push_back(std::make_unique<ParquetBatchReader>(
        parquet, columns, std::move(ranges), batch.batch_size, batch.drop_remainder));
  }
  return out;
}

}  // namespace

CsvOptions csv_options(const protos::DataConfig& dc) {
  CsvOptions o;
  if (dc.delimiter().size() != 1) {
    throw ConfigError(fmt::format(
        "data_config.delimiter: must be exactly one character (byte), got \"{}\" ({} bytes); "
        "e.g. \",\", \"\\t\" or \"\\x01\"",
        printable_delimiter(dc.delimiter()), dc.delimiter().size()));
  }
  o.delimiter = dc.delimiter()[0];
  o.with_header = dc.with_header();
  for (auto& f : input_fields(dc)) o.input_fields.push_back(std::move(f.name));
  return o;
}

DatasetSources make_dataset_sources(const protos::DataConfig& dc, const std::string& input_path,
                                    const std::vector<std::string>& columns,
                                    const BatchOptions& batch, const ReadPosition* resume,
                                    int rank, int world_size, bool log_worker_changes) {
  input_fields(dc);  // input_fields_str's items are checked for every dataset type, as check_config does
  // Batches cut by cost (cost_batch_source.h): the workers read the cost column too and keep
  // every row; the cost batcher cuts and drops.
  const bool by_cost = config::cuts_batches_by_cost(dc);
  std::vector<std::string> read = columns;
  BatchOptions read_batch = batch;
  if (by_cost) {
    if (std::find(read.begin(), read.end(), dc.sample_cost_field()) == read.end()) read.push_back(dc.sample_cost_field());
    read_batch.drop_remainder = false;
  }
  DatasetSources out;
  switch (dc.dataset_type()) {
    case protos::CsvDataset:
      out = csv_sources(dc, expand_input_path(input_path), read, read_batch, resume, rank, world_size,
                        log_worker_changes);
      break;
    case protos::ParquetDataset:
      out = parquet_sources(dc, expand_input_path(input_path), read, read_batch, resume, rank, world_size);
      break;
    case protos::KafkaDataset:
      out = kafka_sources(dc, input_path, read, read_batch, resume, rank, world_size);
      break;
    default:
      throw NotSupportedError(fmt::format("data_config.dataset_type {}",
                                          protos::DatasetType_Name(dc.dataset_type())));
  }
  if (by_cost) {
    const CostBatchOptions cost{dc.sample_cost_field(), static_cast<double>(dc.batch_cost_size()), batch.batch_size,
                                batch.drop_remainder};
    for (auto& source : out.sources) source = std::make_unique<CostBatchSource>(std::move(source), cost);
  }
  if (batch.shuffle_window <= 1 && resume && !resume->worker_window.empty()) {
    log::warning("resuming a shuffled run without shuffle: the batches already trained from unfinished shuffle "
                 "windows are read again");
  }
  if (batch.shuffle_window > 1) {
    // Resumed with the workers that wrote the position: each worker's window again, skipping what
    // was trained. Re-split over other workers or ranks, those windows are read whole again.
    const auto& window = out.start.worker_window;
    if (resume && window.empty() && !resume->worker_window.empty()) {
      int64_t again = 0;
      for (int64_t w : resume->worker_window) again += w;
      log::warning(
          "resuming a shuffled run with another number of workers or ranks: the {} batch(es) already trained "
          "from unfinished shuffle windows are read again",
          again);
    }
    for (size_t w = 0; w < out.sources.size(); ++w) {
      const ShuffleOptions shuffle{batch.shuffle_window, batch.shuffle_seed, window.empty() ? 0 : window.at(w)};
      out.sources[w] = std::make_unique<ShuffleBatchSource>(std::move(out.sources[w]), shuffle);
    }
  }
  if (resume && resume->num_workers != out.start.num_workers) {
    log::info(
        "resuming data written by {} workers with {} workers: remaining rows are re-split, "
        "batch boundaries differ from an uninterrupted run",
        resume->num_workers, out.start.num_workers);
  }
  return out;
}

}  // namespace tzrec::data
