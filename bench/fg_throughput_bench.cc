// Feature-generation benchmark: rows per second from Parquet record batches to training batches on
// a Taobao-shaped FG_DAG config mixing every feature type (bench/configs/fg_taobao.config: 40
// features, 5 of them grouped sequences of 50 items).
//
// Writes the config's data once with gen_data (--rows rows, into --data_dir), then measures with
// --threads loader workers (data_config.num_workers):
//   all:        every feature of the config, what training consumes;
//   per type:   only the features of one type (a grouped sequence_feature counts as
//               "sequence_feature"; features reading another feature's output through `feature:`
//               are left out, their producer may be of another type) — the rows/s of each type,
//               and of its features alone (as "all, features only" below).
//   all, features only: every feature, from record batches already read from the file (the
//               Parquet decoding left out): the batches are read into memory first, then --threads
//               threads run the features over them (thread t parses batches t, t + threads, ...),
//               as the loader's workers do after reading.
// Best of --repeat runs each; the runs of one measurement alternate with nothing else. A run builds
// a new loader (its setup time, printed apart, is part of the run) and reads the file --passes
// times (a longer run: a loader's steady state, its recycled buffers warm). --only TYPE...
// measures only those types.
//
//   build/tzrec_fg_throughput_bench --rows 200000 --threads 2 [--passes 1] [--only sequence_feature]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <google/protobuf/text_format.h>

#include "base/error.h"
#include "base/malloc_tuning.h"
#include "config/feature_util.h"
#include "config/pipeline_config.h"
#include "generated_data.h"
#include "data/dataset_sources.h"
#include "feature/batch_loader.h"
#include "feature/feature_parser.h"
#include "tzrec/protos/pipeline.pb.h"

namespace {

using namespace tzrec;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Rows of one run; `setup_s` gets the loader's construction time (features built, vocabularies and
// tokenizers read), which the run's time includes.
int64_t run_batches(const protos::EasyRecConfig& config, const std::string& path, double* setup_s) {
  const auto t0 = std::chrono::steady_clock::now();
  feature::BatchLoader loader(config, path, feature::Mode::kTrain);
  *setup_s = seconds_since(t0);
  int64_t rows = 0;
  while (auto b = loader.next()) rows += b->batch.batch_size;
  return rows;
}

struct Rate {
  double rows_per_s = 0;
  double setup_s = 0;  // of the best run
};

// Best rows/s of `repeat` runs.
Rate rows_per_second(const protos::EasyRecConfig& config, const std::string& path, int repeat) {
  Rate best;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    double setup_s = 0;
    const int64_t rows = run_batches(config, path, &setup_s);
    const double rate = static_cast<double>(rows) / seconds_since(t0);
    if (rate > best.rows_per_s) best = {rate, setup_s};
  }
  return best;
}

// Best rows/s of `repeat` runs of the features alone over the record batches of `path` (read
// beforehand, each run parsing fresh copies: under FG_DAG parse_in_place adds columns to its batch).
Rate features_only_rows_per_second(const protos::EasyRecConfig& config, const std::string& path, int threads,
                                   int repeat) {
  const auto t_setup = std::chrono::steady_clock::now();
  const feature::FeatureParser parser(config, /*read_labels=*/true);
  const double setup_s = seconds_since(t_setup);
  protos::DataConfig dc = config.data_config();
  dc.set_num_workers(1);
  data::BatchOptions options;
  options.batch_size = dc.batch_size();
  data::DatasetSources sources = data::make_dataset_sources(dc, path, parser.input_columns(), options, nullptr, 0, 1,
                                                            /*log_worker_changes=*/false);
  std::vector<data::RecordBatch> batches;
  for (auto& source : sources.sources) {
    while (auto b = source->next()) batches.push_back(std::move(b->records));
  }
  Rate best;
  for (int i = 0; i < repeat; ++i) {
    std::vector<data::RecordBatch> work = batches;
    int64_t rows = 0;
    for (const auto& b : work) rows += b.num_rows();
    std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        try {
          for (size_t k = static_cast<size_t>(t); k < work.size(); k += static_cast<size_t>(threads)) {
            const sparse::Batch parsed = parser.parse_in_place(&work[k]);
          }
        } catch (...) {
          errors[static_cast<size_t>(t)] = std::current_exception();
        }
      });
    }
    for (auto& th : pool) th.join();
    const double rate = static_cast<double>(rows) / seconds_since(t0);
    for (const auto& e : errors) {
      if (e) std::rethrow_exception(e);
    }
    if (rate > best.rows_per_s) best = {rate, setup_s};
  }
  return best;
}

bool reads_another_feature(const protos::FeatureConfig& fc) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(fc, &text);
  return text.find("\"feature:") != std::string::npos;
}

// The config with only the features of `type` (no model: the loader builds the features only).
protos::EasyRecConfig only_type(const protos::EasyRecConfig& config, const std::string& type, int* count) {
  protos::EasyRecConfig out = config;
  out.clear_feature_configs();
  out.clear_model_config();
  *count = 0;
  for (const auto& fc : config.feature_configs()) {
    if (config::feature_type_name(fc) != type || reads_another_feature(fc)) continue;
    *out.add_feature_configs() = fc;
    *count += fc.has_sequence_feature() ? fc.sequence_feature().features_size() : 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  tzrec::tune_malloc_for_training();  // as the tzrec binary does
  CLI::App app("tzrec feature-generation benchmark (Parquet record batches -> training batches)");
  std::string config_path = "bench/configs/fg_taobao.config";
  int64_t rows = 200000;
  int threads = 2;
  int repeat = 3;
  bool per_type = true;
  int passes = 1;
  std::vector<std::string> only;
  std::string data_dir = "/tmp/tzrec_fg_bench";
  app.add_option("--pipeline_config_path", config_path, "config to generate features for")->capture_default_str();
  app.add_option("--rows", rows, "rows of the generated file")->capture_default_str();
  app.add_option("--threads", threads, "loader workers (data_config.num_workers)")->capture_default_str();
  app.add_option("--repeat", repeat, "runs per measurement (best is reported)")->capture_default_str();
  app.add_option("--per_type", per_type, "also measure each feature type alone")->capture_default_str();
  app.add_option("--passes", passes, "times one loader reads the file (a longer run: steady state)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--only", only, "measure only these feature types (e.g. sequence_feature), not `all`");
  app.add_option("--data_dir", data_dir, "where the generated data is kept")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    const bench::GeneratedData generated = bench::generated_data(config_path, data_dir, rows);
    std::string data_path = generated.data_path;
    for (int p = 1; p < passes; ++p) data_path += "," + generated.data_path;
    protos::EasyRecConfig config = config::load_pipeline_config(generated.config_path);
    config.mutable_data_config()->set_num_workers(static_cast<uint32_t>(threads));
    fmt::print("{}: {} loader threads, batch {}, {} pass(es) of {} rows per run, best of {}\n", config_path,
               threads, config.data_config().batch_size(), passes, rows, repeat);
    fmt::print("{:<20} {:>9} {:>12} {:>10}\n", "features", "count", "rows/s", "setup ms");
    if (only.empty()) {
      const Rate all = rows_per_second(config, data_path, repeat);
      int total = 0;
      for (const auto& fc : config.feature_configs()) {
        total += fc.has_sequence_feature() ? fc.sequence_feature().features_size() : 1;
      }
      fmt::print("{:<20} {:>9} {:>12.0f} {:>10.1f}\n", "all", total, all.rows_per_s, all.setup_s * 1e3);
      const Rate fg = features_only_rows_per_second(config, data_path, threads, repeat);
      fmt::print("{:<20} {:>9} {:>12.0f} {:>10.1f}   (record batches read beforehand: no Parquet decoding)\n",
                 "all, features only", total, fg.rows_per_s, fg.setup_s * 1e3);
    }
    if (per_type || !only.empty()) {
      std::vector<std::string> types;
      for (const auto& fc : config.feature_configs()) {
        const std::string t = config::feature_type_name(fc);
        if (!only.empty() && std::find(only.begin(), only.end(), t) == only.end()) continue;
        if (std::find(types.begin(), types.end(), t) == types.end()) types.push_back(t);
      }
      for (const std::string& t : types) {
        int count = 0;
        const protos::EasyRecConfig one = only_type(config, t, &count);
        if (count == 0) continue;
        const Rate r = rows_per_second(one, data_path, repeat);
        const Rate fg = features_only_rows_per_second(one, data_path, threads, repeat);
        fmt::print("{:<20} {:>9} {:>12.0f} {:>10.1f}   features only {:.0f}\n", t, count, r.rows_per_s,
                   r.setup_s * 1e3, fg.rows_per_s);
      }
    }
  } catch (const Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
