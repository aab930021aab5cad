#include <filesystem>

#include "base/error.h"
#include "base/logging.h"
#include "cli/commands.h"
#include "data/synthetic_criteo.h"
#include "datagen/gen_data.h"

namespace tzrec::cli {

Action add_gen_data_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "gen_data",
      "Write synthetic data with a learnable signal: for a pipeline config (--pipeline_config_path) "
      "every column it reads, else Criteo-shaped data (label, int_0..12, cat_0..25)");
  struct Flags {
    std::string pipeline_config_path;
    std::string output_dir;
    int64_t num_rows = 200000;
    int64_t num_eval_rows = 50000;
    uint64_t seed = 2024;
    std::string format = "csv";
  };
  auto flags = std::make_shared<Flags>();
  cmd->add_option("--pipeline_config_path", flags->pipeline_config_path,
                  "write D/train.parquet, D/eval.parquet, the sampler tables and D/pipeline.config "
                  "for this config (text format or .json)");
  cmd->add_option("--output_dir", flags->output_dir,
                  "directory for train.<format> and eval.<format>")->required();
  cmd->add_option("--num_rows", flags->num_rows, "training rows")->capture_default_str();
  cmd->add_option("--num_eval_rows", flags->num_eval_rows, "evaluation rows")->capture_default_str();
  cmd->add_option("--seed", flags->seed, "seed of the hidden model and the sampling")->capture_default_str();
  auto* format = cmd->add_option("--format", flags->format,
                                 "Criteo mode only: csv (text ids) or parquet (INT64 columns, SNAPPY, "
                                 "row groups of 65536 rows)")
                     ->check(CLI::IsMember({"csv", "parquet"}))
                     ->capture_default_str();
  return [flags, format]() {
    if (flags->num_rows <= 0 || flags->num_eval_rows < 0) {
      throw UsageError("--num_rows must be > 0 and --num_eval_rows >= 0");
    }
    if (!flags->pipeline_config_path.empty()) {
      if (format->count() > 0 && flags->format != "parquet") {
        throw UsageError("--format " + flags->format +
                         " cannot be combined with --pipeline_config_path, which writes Parquet");
      }
      datagen::GenDataOptions options;
      options.pipeline_config_path = flags->pipeline_config_path;
      options.output_dir = flags->output_dir;
      options.num_rows = flags->num_rows;
      options.num_eval_rows = flags->num_eval_rows;
      options.seed = flags->seed;
      datagen::generate_data(options);
      return 0;
    }
    std::filesystem::create_directories(flags->output_dir);
    data::SyntheticCriteoOptions options;
    options.seed = flags->seed;
    options.num_rows = flags->num_rows;
    options.format = flags->format;
    const auto dir = std::filesystem::path(flags->output_dir);
    auto write = [&](const std::string& stem, int64_t rows, int64_t row_offset) {
      const std::string path = (dir / (stem + "." + flags->format)).string();
      options.num_rows = rows;
      data::write_synthetic_criteo(path, options, row_offset);
      log::info("wrote {} rows to {}", rows, path);
    };
    write("train", flags->num_rows, /*row_offset=*/0);
    if (flags->num_eval_rows > 0) write("eval", flags->num_eval_rows, /*row_offset=*/flags->num_rows);
    return 0;
  };
}

}  // namespace tzrec::cli
