// `tzrec resolve_sid_collisions`: best-effort resolution of semantic-ID collisions (TorchEasyRec's
// tzrec/tools/sid/resolve_sid_collisions.py flags; retrieval/sid_collision_job.h).
#include <memory>

#include "cli/commands.h"
#include "cli/odps_quota_flag.h"
#include "retrieval/sid_collision_job.h"
#include "retrieval/sid_quality_job.h"

namespace tzrec::cli {

Action add_resolve_sid_collisions_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("resolve_sid_collisions",
                                 "move the items of over-full SID buckets to free last-layer codes of their band and "
                                 "write the SID bundle (sid_to_items, item_to_sid, manifest.json)");
  auto o = std::make_shared<retrieval::SidCollisionOptions>();
  auto codebook = std::make_shared<std::string>();
  auto quota = std::make_shared<std::string>();
  cmd->add_option("--input_path", o->input_path, "SID table: item ids, codes, candidate codes (Parquet or CSV)")
      ->required();
  cmd->add_option("--output_path", o->output_path,
                  "bundle root: <root>/<generation>/sid_to_items, item_to_sid and manifest.json");
  cmd->add_option("--item_to_sid_root", o->item_to_sid_root, "root of item_to_sid when not --output_path");
  cmd->add_option("--generation", o->generation, "generation written, e.g. v1 (required unless --rate_only)");
  cmd->add_option("--from_generation", o->from_generation, "published generation to append the input's items onto (no published SID moves)");
  cmd->add_option("--reader_type", o->reader_type, "CsvReader or ParquetReader (default: from the file names)");
  cmd->add_option("--item_to_sid_writer_type", o->item_to_sid_writer_type,
                  "CsvWriter or ParquetWriter for item_to_sid (default: the reader's kind)");
  cmd->add_option("--batch_size", o->batch_size, "rows per read batch")->capture_default_str();
  cmd->add_option("--progress_interval", o->progress_interval, "rows between progress lines")->capture_default_str();
  cmd->add_option("--item_id_field", o->item_id_field, "item id column")->capture_default_str();
  cmd->add_option("--code_field", o->code_field, "SID codes column")->capture_default_str();
  cmd->add_option("--codebook", *codebook, "codebook size of each layer, e.g. 8192,8192,8192")->required();
  cmd->add_option("--candidate_codes_field", o->candidate_codes_field,
                  "flat candidate codes column (top-k × layers per item) for --strategy candidate")
      ->capture_default_str();
  cmd->add_option("--max_items_per_codebook", o->max_items_per_codebook, "items one SID may hold")->required();
  cmd->add_option("--strategy", o->strategy, "candidate (the model's candidates) or random (hashed draws)")
      ->capture_default_str();
  cmd->add_option("--random_num_candidates", o->random_num_candidates, "draws per overflow item for --strategy random")
      ->capture_default_str();
  cmd->add_flag("--rate_only", o->rate_only, "compute and log the statistics without writing the bundle");
  auto* quota_opt = add_odps_quota_flag(cmd, *quota);
  return [o, codebook, quota, quota_opt]() {
    warn_odps_quota(quota_opt);
    o->codebook = retrieval::parse_sid_codebook(*codebook);
    retrieval::run_resolve_sid_collisions(*o);
    return 0;
  };
}

}  // namespace tzrec::cli
