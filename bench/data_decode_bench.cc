// Input-pipeline benchmark: how fast Criteo-shaped files become training batches.
//
// Writes (once, into --data_dir) a Criteo-shaped file of --rows rows in Parquet (label + 13
// INT64 + 26 STRING columns, SNAPPY, row groups of 65536 rows) and the same rows as CSV, then for
// each format measures, with --threads loader workers:
//   decode: file -> RecordBatch (all columns projected), no feature processing;
//   batches: file -> sparse::Batch through the feature parser (FG_NORMAL: the 26 string columns
//            hashed into buckets, the 13 counts as raw features), what training consumes.
// Prints rows/s and MB/s of file bytes for each, best of --repeat runs.
//
//   build-bench/tzrec_data_decode_bench --rows 1000000 --threads 2 --data_dir /tmp/decode_bench
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <memory>

#include "data/dataset_sources.h"
#include "data/parallel_loader.h"
#include "data/synthetic_criteo.h"
#include "feature/batch_loader.h"
#include "tzrec/protos/pipeline.pb.h"

namespace {

using namespace tzrec;

protos::EasyRecConfig make_config(protos::DatasetType type, int threads, int64_t batch_size) {
  protos::EasyRecConfig config;
  auto* dc = config.mutable_data_config();
  dc->set_dataset_type(type);
  dc->set_batch_size(static_cast<uint32_t>(batch_size));
  dc->set_num_workers(static_cast<uint32_t>(threads));
  dc->set_with_header(true);
  dc->set_fg_mode(protos::FG_NORMAL);
  dc->add_label_fields("label");
  for (int i = 0; i < data::kSynthNumInt; ++i) {
    auto* raw = config.add_feature_configs()->mutable_raw_feature();
    raw->set_feature_name(fmt::format("int_{}", i));
    raw->set_expression(fmt::format("user:int_{}", i));
  }
  for (int i = 0; i < data::kSynthNumCat; ++i) {
    auto* id = config.add_feature_configs()->mutable_id_feature();
    id->set_feature_name(fmt::format("cat_{}", i));
    id->set_expression(fmt::format("item:cat_{}", i));
    id->set_hash_bucket_size(1000000);
    id->set_embedding_dim(16);
  }
  return config;
}

std::vector<std::string> all_columns() {
  std::vector<std::string> cols{"label"};
  for (int i = 0; i < data::kSynthNumInt; ++i) cols.push_back(fmt::format("int_{}", i));
  for (int i = 0; i < data::kSynthNumCat; ++i) cols.push_back(fmt::format("cat_{}", i));
  return cols;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Rows through RecordBatch only (no feature parsing).
int64_t run_decode(const protos::EasyRecConfig& config, const std::string& path) {
  data::BatchOptions batch;
  batch.batch_size = config.data_config().batch_size();
  auto sources = data::make_dataset_sources(config.data_config(), path, all_columns(), batch,
                                            nullptr, 0, 1, false);
  data::ParallelLoader<int64_t> loader(
      std::move(sources.sources), [](const data::RecordBatch& b) { return b.num_rows(); },
      std::move(sources.start), feature::BatchLoader::kPrefetchDepth);
  int64_t rows = 0;
  while (auto item = loader.next()) rows += item->value;
  return rows;
}

// Rows through the feature parser into training batches.
int64_t run_batches(const protos::EasyRecConfig& config, const std::string& path) {
  feature::BatchLoader loader(config, path, feature::Mode::kTrain);
  int64_t rows = 0;
  while (auto b = loader.next()) rows += b->batch.batch_size;
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("tzrec input-pipeline benchmark (Parquet and CSV decode into training batches)");
  int64_t rows = 1000000;
  int threads = 2;
  int repeat = 3;
  int64_t batch_size = 8192;
  std::string data_dir = "/tmp/tzrec_decode_bench";
  std::vector<std::string> only_formats = {"parquet", "csv"};
  std::vector<std::string> stages = {"decode", "batches"};
  app.add_option("--rows", rows, "rows of the generated files")->capture_default_str();
  app.add_option("--threads", threads, "loader workers (data_config.num_workers)")->capture_default_str();
  app.add_option("--repeat", repeat, "runs per measurement (best is reported)")->capture_default_str();
  app.add_option("--batch_size", batch_size, "rows per batch")->capture_default_str();
  app.add_option("--data_dir", data_dir, "where the generated files are kept")->capture_default_str();
  app.add_option("--formats", only_formats, "formats to measure")
      ->check(CLI::IsMember({"parquet", "csv"}))
      ->capture_default_str();
  app.add_option("--stages", stages, "stages to measure")
      ->check(CLI::IsMember({"decode", "batches"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    std::filesystem::create_directories(data_dir);
    data::SyntheticCriteoOptions options;
    options.num_rows = rows;
    options.string_categoricals = true;
    struct Format {
      const char* name;
      protos::DatasetType type;
      std::string path;
    };
    std::vector<Format> formats = {
        {"parquet", protos::ParquetDataset, fmt::format("{}/criteo_{}.parquet", data_dir, rows)},
        {"csv", protos::CsvDataset, fmt::format("{}/criteo_{}.csv", data_dir, rows)}};
    formats.erase(std::remove_if(formats.begin(), formats.end(),
                                 [&](const Format& f) {
                                   return std::find(only_formats.begin(), only_formats.end(),
                                                    f.name) == only_formats.end();
                                 }),
                  formats.end());
    for (const auto& f : formats) {
      if (!std::filesystem::exists(f.path)) {
        options.format = f.name;
        const auto t0 = std::chrono::steady_clock::now();
        data::write_synthetic_criteo(f.path, options);
        fmt::print("wrote {} ({} rows) in {:.1f} s\n", f.path, rows, seconds_since(t0));
      }
    }
    fmt::print("{} rows, {} loader threads, batch {}, best of {}\n", rows, threads, batch_size,
               repeat);
    fmt::print("{:<8} {:<8} {:>10} {:>14} {:>10}\n", "format", "stage", "MB", "rows/s", "MB/s");
    for (const auto& f : formats) {
      const auto config = make_config(f.type, threads, batch_size);
      const double mb = static_cast<double>(std::filesystem::file_size(f.path)) / 1e6;
      for (const std::string& stage : stages) {
        double best = 1e30;
        for (int r = 0; r < repeat; ++r) {
          const auto t0 = std::chrono::steady_clock::now();
          const int64_t n = stage == "decode" ? run_decode(config, f.path)
                                                           : run_batches(config, f.path);
          best = std::min(best, seconds_since(t0));
          if (n != rows) {
            fmt::print(stderr, "read {} rows, expected {}\n", n, rows);
            return 1;
          }
        }
        fmt::print("{:<8} {:<8} {:>10.1f} {:>14.0f} {:>10.1f}\n", f.name, stage, mb,
                   static_cast<double>(rows) / best, mb / best);
      }
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
