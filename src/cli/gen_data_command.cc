#include <filesystem>

#include "base/error.h"
#include "base/logging.h"
#include "cli/commands.h"
#include "data/synthetic_criteo.h"
#include "datagen/behaviour_dataset.h"
#include "datagen/gen_data.h"

namespace tzrec::cli {

Action add_gen_data_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "gen_data",
      "Write synthetic data with a learnable signal: for a pipeline config (--pipeline_config_path) "
      "every column it reads, else a built-in data set (--dataset): Criteo-shaped data (label, int_0..12, "
      "cat_0..25) or user behaviour histories for sequence models (DIN)");
  // The data options (pipeline_config_path, output_dir, rows, seed with their defaults) serve all
  // modes; --dataset and --format only the built-in data sets.
  struct Flags {
    datagen::GenDataOptions data;
    std::string dataset = "criteo";
    std::string format = "csv";
  };
  auto flags = std::make_shared<Flags>();
  datagen::GenDataOptions& d = flags->data;
  cmd->add_option("--pipeline_config_path", d.pipeline_config_path,
                  "write D/train.parquet, D/eval.parquet, the sampler tables and D/pipeline.config "
                  "for this config (text format or .json)");
  cmd->add_option("--output_dir", d.output_dir, "directory for train.<format> and eval.<format>")->required();
  cmd->add_option("--num_rows", d.num_rows, "training rows")->capture_default_str();
  cmd->add_option("--num_eval_rows", d.num_eval_rows, "evaluation rows")->capture_default_str();
  cmd->add_option("--seed", d.seed, "seed of the hidden model and the sampling")->capture_default_str();
  cmd->add_option("--max_history_length", d.max_history_length,
                  "generative (HSTU) configs: the longest user history per row (also capped by the sequence's "
                  "sequence_length)")
      ->capture_default_str();
  cmd->add_option("--max_candidates", d.max_candidates,
                  "generative (HSTU) configs: the most candidates per row (also capped by sequence_length)")
      ->capture_default_str();
  auto* dataset = cmd->add_option("--dataset", flags->dataset,
                                  "built-in data set (not with --pipeline_config_path): criteo (label, "
                                  "int_0..12, cat_0..25; for examples/*_criteo_synth.config) or behaviour "
                                  "(label, user_id, item_id, cate_id, brand and the click history "
                                  "click_seq__item_id / __cate_id / __brand as '|'-joined ids; for "
                                  "examples/*_behaviour.config; see bench/README.md)")
                      ->check(CLI::IsMember({"criteo", "behaviour"}))
                      ->capture_default_str();
  auto* format = cmd->add_option("--format", flags->format,
                                 "built-in data sets only: csv (text ids, header line) or parquet (INT64 "
                                 "ids, behaviour histories as STRING; SNAPPY, row groups of 65536 rows)")
                     ->check(CLI::IsMember({"csv", "parquet"}))
                     ->capture_default_str();
  return [flags, dataset, format]() {
    const datagen::GenDataOptions& d = flags->data;
    if (d.num_rows <= 0 || d.num_eval_rows < 0) {
      throw UsageError("--num_rows must be > 0 and --num_eval_rows >= 0");
    }
    if (d.max_history_length < 1 || d.max_candidates < 1) {
      throw UsageError("--max_history_length and --max_candidates must be >= 1");
    }
    if (!d.pipeline_config_path.empty()) {
      if (dataset->count() > 0) {
        throw UsageError("--dataset " + flags->dataset +
                         " cannot be combined with --pipeline_config_path, which writes the columns of "
                         "that config; drop one of them");
      }
      if (format->count() > 0 && flags->format != "parquet") {
        throw UsageError("--format " + flags->format +
                         " cannot be combined with --pipeline_config_path, which writes Parquet");
      }
      datagen::generate_data(d);
      return 0;
    }
    std::filesystem::create_directories(d.output_dir);
    const auto dir = std::filesystem::path(d.output_dir);
    if (flags->dataset == "behaviour") {
      datagen::BehaviourOptions options;
      options.seed = d.seed;
      options.format = flags->format;
      auto write = [&](const std::string& stem, int64_t rows, int64_t row_offset) {
        const std::string path = (dir / (stem + "." + flags->format)).string();
        options.num_rows = rows;
        datagen::write_behaviour_dataset(path, options, row_offset);
        log::info("wrote {} rows to {}", rows, path);
      };
      write("train", d.num_rows, /*row_offset=*/0);
      if (d.num_eval_rows > 0) write("eval", d.num_eval_rows, /*row_offset=*/d.num_rows);
      return 0;
    }
    data::SyntheticCriteoOptions options;
    options.seed = d.seed;
    options.num_rows = d.num_rows;
    options.format = flags->format;
    auto write = [&](const std::string& stem, int64_t rows, int64_t row_offset) {
      const std::string path = (dir / (stem + "." + flags->format)).string();
      options.num_rows = rows;
      data::write_synthetic_criteo(path, options, row_offset);
      log::info("wrote {} rows to {}", rows, path);
    };
    write("train", d.num_rows, /*row_offset=*/0);
    if (d.num_eval_rows > 0) write("eval", d.num_eval_rows, /*row_offset=*/d.num_rows);
    return 0;
  };
}

}  // namespace tzrec::cli
