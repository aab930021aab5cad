#include <filesystem>

#include "base/error.h"
#include "base/logging.h"
#include "cli/commands.h"
#include "data/synthetic_criteo.h"

namespace tzrec::cli {

Action add_gen_data_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "gen_data", "Write synthetic Criteo-shaped data (label, int_0..12, cat_0..25) with a learnable signal");
  struct Flags {
    std::string output_dir;
    int64_t num_rows = 200000;
    int64_t num_eval_rows = 50000;
    uint64_t seed = 2024;
    std::string format = "csv";
  };
  auto flags = std::make_shared<Flags>();
  cmd->add_option("--output_dir", flags->output_dir, "directory for train.csv and eval.csv")->required();
  cmd->add_option("--num_rows", flags->num_rows, "training rows")->capture_default_str();
  cmd->add_option("--num_eval_rows", flags->num_eval_rows, "evaluation rows")->capture_default_str();
  cmd->add_option("--seed", flags->seed, "seed of the hidden model and the sampling")->capture_default_str();
  cmd->add_option("--format", flags->format, "output format: csv")->capture_default_str();
  return [flags]() {
    if (flags->format != "csv") throw NotSupportedError("gen_data --format " + flags->format);
    if (flags->num_rows <= 0 || flags->num_eval_rows < 0) {
      throw UsageError("--num_rows must be > 0 and --num_eval_rows >= 0");
    }
    std::filesystem::create_directories(flags->output_dir);
    data::SyntheticCriteoOptions options;
    options.seed = flags->seed;
    options.num_rows = flags->num_rows;
    const auto dir = std::filesystem::path(flags->output_dir);
    data::write_synthetic_criteo_csv((dir / "train.csv").string(), options, /*row_offset=*/0);
    log::info("wrote {} rows to {}", flags->num_rows, (dir / "train.csv").string());
    if (flags->num_eval_rows > 0) {
      options.num_rows = flags->num_eval_rows;
      data::write_synthetic_criteo_csv((dir / "eval.csv").string(), options, /*row_offset=*/flags->num_rows);
      log::info("wrote {} rows to {}", flags->num_eval_rows, (dir / "eval.csv").string());
    }
    return 0;
  };
}

}  // namespace tzrec::cli
