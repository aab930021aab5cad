// `tzrec hitrate`: HitRate@K of retrieval embeddings (TorchEasyRec's tzrec/tools/hitrate.py flags;
// the search is exact, retrieval/hitrate_job.h).
#include "base/error.h"
#include "base/logging.h"
#include "cli/commands.h"
#include "cli/odps_quota_flag.h"
#include "retrieval/hitrate_job.h"

namespace tzrec::cli {

Action add_hitrate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "hitrate",
      "HitRate@K of user embeddings against item embeddings (exact top-K search): the share of each request's "
      "ground-truth items among its top K recalled items");
  auto o = std::make_shared<retrieval::HitrateOptions>();
  auto ivf = std::make_shared<std::pair<int64_t, int64_t>>(1000, 800);
  auto quota = std::make_shared<std::string>();
  cmd->add_option("--user_gt_input", o->user_gt_input,
                  "user table with columns [request_id, gt_items, user_tower_emb] (Parquet or CSV with a header)")
      ->required();
  cmd->add_option("--item_embedding_input", o->item_embedding_input,
                  "item table with columns [item_id, item_tower_emb]")
      ->required();
  cmd->add_option("--total_hitrate_output", o->total_hitrate_output,
                  "directory for the total hitrate (part-0.parquet, column hitrate)");
  cmd->add_option("--hitrate_details_output", o->hitrate_details_output,
                  "directory for one row per request: id, topk_ids, topk_dists, hitrate, hit_ids (part-<rank>.parquet)");
  cmd->add_option("--batch_size", o->batch_size, "requests per search batch")->capture_default_str();
  cmd->add_option("--index_type", o->index_type, "IVFFlatIP (inner product) or IVFFlatL2 (squared L2 distance)")
      ->capture_default_str();
  cmd->add_option("--top_k", o->top_k, "items recalled per interest")->capture_default_str();
  cmd->add_flag("--topk_across_interests", o->topk_across_interests,
                "keep the top K across all interests of a request instead of K per interest");
  auto* nlist = cmd->add_option("--ivf_nlist", ivf->first, "accepted for compatibility; the search here is exact");
  auto* nprobe = cmd->add_option("--ivf_nprobe", ivf->second, "accepted for compatibility; the search here is exact");
  cmd->add_option("--item_id_field", o->item_id_field, "item id column")->capture_default_str();
  cmd->add_option("--item_embedding_field", o->item_embedding_field, "item embedding column")->capture_default_str();
  cmd->add_option("--request_id_field", o->request_id_field, "request id column")->capture_default_str();
  cmd->add_option("--gt_items_field", o->gt_items_field, "ground-truth items column (list, or ','-joined text)")
      ->capture_default_str();
  cmd->add_option("--user_embedding_field", o->user_embedding_field,
                  "user embedding column (list<float>, list<list<float>> per interest, or text)")
      ->capture_default_str();
  cmd->add_option("--num_interests", o->num_interests, "embeddings per request")->capture_default_str();
  cmd->add_option("--num_interests_field", o->num_interests_field, "column with the valid interests per request");
  cmd->add_option("--reader_type", o->reader_type, "CsvReader or ParquetReader (default: from the file names)");
  cmd->add_option("--writer_type", o->writer_type, "ParquetWriter (the only one here)");
  auto* quota_opt = add_odps_quota_flag(cmd, *quota);
  // ivf and quota hold what CLI11 writes when it parses: the action keeps them alive.
  return [o, ivf, quota, nlist, nprobe, quota_opt]() {
    if (nlist->count() > 0 || nprobe->count() > 0) {
      log::warning("--ivf_nlist / --ivf_nprobe are accepted and ignored: the search here is exact (every item is "
                   "scored), which an IVF index approximates");
    }
    warn_odps_quota(quota_opt);
    retrieval::run_hitrate(*o);
    return 0;
  };
}

}  // namespace tzrec::cli
