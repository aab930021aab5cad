// The rows `tzrec gen_data` writes for a config, generated once into a data folder and reused by
// later runs of a benchmark (header-only; the benchmarks link tzrec_datagen).
#pragma once

#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <string>

#include "datagen/gen_data.h"

namespace tzrec::bench {

struct GeneratedData {
  std::string data_path;    // <dir>/train.parquet
  std::string config_path;  // <dir>/pipeline.config: the config reading it
};

inline GeneratedData generated_data(const std::string& config_path, const std::string& data_dir, int64_t rows) {
  GeneratedData out{fmt::format("{}/train.parquet", data_dir), fmt::format("{}/pipeline.config", data_dir)};
  if (!std::filesystem::exists(out.data_path) || !std::filesystem::exists(out.config_path)) {
    datagen::GenDataOptions options;
    options.pipeline_config_path = config_path;
    options.output_dir = data_dir;
    options.num_rows = rows;
    options.num_eval_rows = 0;
    const auto t0 = std::chrono::steady_clock::now();
    datagen::generate_data(options);
    fmt::print("wrote {} ({} rows) in {:.1f} s\n", out.data_path, rows,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return out;
}

}  // namespace tzrec::bench
