#include "datagen/gen_data.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"
#include "config/pipeline_config.h"
#include "datagen/output_config.h"
#include "datagen/parquet_output.h"
#include "datagen/row_generator.h"
#include "datagen/sampler_tables.h"

namespace tzrec::datagen {

namespace fs = std::filesystem;

namespace {

// Creates `dir` and checks that files can be created in it.
void prepare_output_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    throw UsageError(fmt::format("--output_dir '{}': cannot create the directory: {}", dir.string(),
                                 ec.message()));
  }
  const fs::path probe = dir / ".gen_data_write_check";
  {
    std::ofstream out(probe);
    if (!out) {
      throw UsageError(fmt::format("--output_dir '{}': cannot write files there; choose a writable "
                                   "directory",
                                   dir.string()));
    }
  }
  fs::remove(probe, ec);
}

}  // namespace

GenDataResult generate_data(const GenDataOptions& options) {
  if (options.num_rows <= 0 || options.num_eval_rows < 0) {
    throw UsageError("--num_rows must be > 0 and --num_eval_rows >= 0");
  }
  if (options.max_history_length <= 0 || options.max_candidates <= 0) {
    throw UsageError("the longest history and the most candidates per row must be > 0");
  }
  const protos::EasyRecConfig config = config::load_pipeline_config(options.pipeline_config_path);
  GenDataResult result;
  result.plan = plan_columns(config);
  const fs::path dir = fs::absolute(options.output_dir).lexically_normal();
  prepare_output_dir(dir);

  GenerativeOptions generative;
  generative.max_history_length = options.max_history_length;
  generative.max_candidates = options.max_candidates;
  const RowGenerator rows(result.plan, options.seed, generative);
  result.train_path = (dir / "train.parquet").string();
  std::vector<std::pair<int64_t, int64_t>> pairs;
  const bool want_pairs = !result.plan.sampler.type.empty();
  write_rows_parquet(rows, result.train_path, 0, options.num_rows, options.row_group_rows,
                     want_pairs ? &pairs : nullptr);
  log::info("wrote {} rows, {} columns to {}", options.num_rows, result.plan.columns.size(), result.train_path);
  if (options.num_eval_rows > 0) {
    result.eval_path = (dir / "eval.parquet").string();
    write_rows_parquet(rows, result.eval_path, options.num_rows, options.num_eval_rows, options.row_group_rows);
    log::info("wrote {} rows to {}", options.num_eval_rows, result.eval_path);
  }
  const SamplerTables tables = write_sampler_tables(rows, dir.string(), pairs, options.seed);
  result.table_paths = tables.paths();
  for (const auto& p : result.table_paths) log::info("wrote sampler table {}", p);

  result.config_path = (dir / "pipeline.config").string();
  config::save_pipeline_config(output_config(config, result.train_path, result.eval_path, tables),
                               result.config_path);
  log::info("wrote {}", result.config_path);
  return result;
}

}  // namespace tzrec::datagen
