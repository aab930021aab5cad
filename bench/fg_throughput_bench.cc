// Feature-generation benchmark: rows per second from Parquet record batches to training batches on
// a Taobao-shaped FG_DAG config mixing every feature type (bench/configs/fg_taobao.config: 40
// features, 5 of them grouped sequences of 50 items).
//
// Writes the config's data once with gen_data (--rows rows, into --data_dir), then measures with
// --threads loader workers (data_config.num_workers):
//   all:        every feature of the config, what training consumes;
//   per type:   only the features of one type (a grouped sequence_feature counts as
//               "sequence_feature"; features reading another feature's output through `feature:`
//               are left out, their producer may be of another type) — the rows/s of each type.
// Best of --repeat runs each; the runs of one measurement alternate with nothing else.
//
//   build/tzrec_fg_throughput_bench --rows 200000 --threads 2
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <string>
#include <vector>

#include <google/protobuf/text_format.h>

#include "base/error.h"
#include "config/feature_util.h"
#include "config/pipeline_config.h"
#include "generated_data.h"
#include "feature/batch_loader.h"
#include "tzrec/protos/pipeline.pb.h"

namespace {

using namespace tzrec;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int64_t run_batches(const protos::EasyRecConfig& config, const std::string& path) {
  feature::BatchLoader loader(config, path, feature::Mode::kTrain);
  int64_t rows = 0;
  while (auto b = loader.next()) rows += b->batch.batch_size;
  return rows;
}

// Best rows/s of `repeat` runs.
double rows_per_second(const protos::EasyRecConfig& config, const std::string& path, int repeat, int64_t* rows) {
  double best = 0;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    *rows = run_batches(config, path);
    best = std::max(best, static_cast<double>(*rows) / seconds_since(t0));
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
  CLI::App app("tzrec feature-generation benchmark (Parquet record batches -> training batches)");
  std::string config_path = "bench/configs/fg_taobao.config";
  int64_t rows = 200000;
  int threads = 2;
  int repeat = 3;
  bool per_type = true;
  std::string data_dir = "/tmp/tzrec_fg_bench";
  app.add_option("--pipeline_config_path", config_path, "config to generate features for")->capture_default_str();
  app.add_option("--rows", rows, "rows of the generated file")->capture_default_str();
  app.add_option("--threads", threads, "loader workers (data_config.num_workers)")->capture_default_str();
  app.add_option("--repeat", repeat, "runs per measurement (best is reported)")->capture_default_str();
  app.add_option("--per_type", per_type, "also measure each feature type alone")->capture_default_str();
  app.add_option("--data_dir", data_dir, "where the generated data is kept")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    const bench::GeneratedData generated = bench::generated_data(config_path, data_dir, rows);
    const std::string& data_path = generated.data_path;
    protos::EasyRecConfig config = config::load_pipeline_config(generated.config_path);
    config.mutable_data_config()->set_num_workers(static_cast<uint32_t>(threads));
    fmt::print("{}: {} loader threads, batch {}, best of {}\n", config_path, threads,
               config.data_config().batch_size(), repeat);
    fmt::print("{:<20} {:>9} {:>12}\n", "features", "count", "rows/s");
    int64_t n = 0;
    const double all = rows_per_second(config, data_path, repeat, &n);
    int total = 0;
    for (const auto& fc : config.feature_configs()) {
      total += fc.has_sequence_feature() ? fc.sequence_feature().features_size() : 1;
    }
    fmt::print("{:<20} {:>9} {:>12.0f}\n", "all", total, all);
    if (per_type) {
      std::vector<std::string> types;
      for (const auto& fc : config.feature_configs()) {
        const std::string t = config::feature_type_name(fc);
        if (std::find(types.begin(), types.end(), t) == types.end()) types.push_back(t);
      }
      for (const std::string& t : types) {
        int count = 0;
        const protos::EasyRecConfig one = only_type(config, t, &count);
        if (count == 0) continue;
        fmt::print("{:<20} {:>9} {:>12.0f}\n", t, count, rows_per_second(one, data_path, repeat, &n));
      }
    }
  } catch (const Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
