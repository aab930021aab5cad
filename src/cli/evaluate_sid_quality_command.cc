// `tzrec evaluate_sid_quality`: collision and distribution quality of semantic IDs (TorchEasyRec's
// tzrec/tools/sid/evaluate_sid_quality.py flags; retrieval/sid_quality_job.h).
#include <memory>

#include <fmt/format.h>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/odps_quota_flag.h"
#include "retrieval/sid_quality_job.h"

namespace tzrec::cli {

Action add_evaluate_sid_quality_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "evaluate_sid_quality",
      "collision and distribution quality of semantic IDs (one field, or an original field against a final one)");
  auto o = std::make_shared<retrieval::SidQualityOptions>();
  auto codebook = std::make_shared<std::string>();
  auto quota = std::make_shared<std::string>();
  cmd->add_option("--input_path", o->input_path, "item table holding the SID field(s) (Parquet, or CSV with a header)")
      ->required();
  cmd->add_option("--summary_output", o->summary_output, "directory for the global metrics, one row per view");
  cmd->add_option("--layer_stats_output", o->layer_stats_output,
                  "directory for the per-layer metrics, one row per view and layer");
  cmd->add_option("--codes_field", o->codes_field, "SID field evaluated (the single or after view)")
      ->capture_default_str();
  cmd->add_option("--origin_codes_field", o->origin_codes_field,
                  "original SID field of the same rows: adds the before, after and delta views");
  cmd->add_option("--codebook", *codebook, "codebook size of each layer, e.g. 256,256,256")->required();
  cmd->add_option("--invalid_row_policy", o->invalid_row_policy,
                  "drop: skip malformed or out-of-range rows; error: stop at the first")
      ->capture_default_str();
  cmd->add_option("--log_top_sids", o->log_top_sids, "log this many most frequent SIDs per view (> 0)");
  cmd->add_option("--batch_size", o->batch_size, "rows per read batch")->capture_default_str();
  cmd->add_option("--reader_type", o->reader_type, "CsvReader or ParquetReader (default: from the file names)");
  cmd->add_option("--writer_type", o->writer_type, "ParquetWriter or CsvWriter (default: the reader's kind)");
  auto* log_top = cmd->get_option("--log_top_sids");
  auto* quota_opt = add_odps_quota_flag(cmd, *quota);
  return [o, codebook, quota, quota_opt, log_top]() {
    warn_odps_quota(quota_opt);
    if (log_top->count() > 0 && o->log_top_sids <= 0) {
      throw UsageError(fmt::format("--log_top_sids: must be a positive int, got {}", o->log_top_sids));
    }
    o->codebook = retrieval::parse_sid_codebook(*codebook);
    retrieval::run_evaluate_sid_quality(*o);
    return 0;
  };
}

}  // namespace tzrec::cli
