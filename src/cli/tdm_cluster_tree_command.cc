// `tzrec tdm_cluster_tree`: the learnt TDM tree from item embeddings (TorchEasyRec's
// tzrec/tools/tdm/cluster_tree.py flags; tdm/tree_cluster.h).
#include "cli/commands.h"
#include "cli/tdm_tree_flags.h"
#include "tdm/tree_cluster.h"
#include "tdm/tree_io.h"

namespace tzrec::cli {

Action add_tdm_cluster_tree_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "tdm_cluster_tree",
      "cluster items by their embeddings (recursive balanced k-means) into TDM's learnt tree and write its node, "
      "edge and predict edge tables, node features and serving tree");
  auto o = std::make_shared<tdm::ClusterTreeOptions>();
  auto quota = std::make_shared<std::string>();
  cmd->add_option("--item_input_path", o->item_input_path,
                  "item embeddings and features (.parquet, e.g. the predict output of export_dir/embedding, or .csv)");
  cmd->add_option("--item_id_field", o->item_id_field, "item id column");
  cmd->add_option("--embedding_field", o->embedding_field, "item embedding column")->capture_default_str();
  cmd->add_option("--parallel", o->parallel, "threads clustering the tree's nodes")->capture_default_str();
  auto* quota_opt = add_tdm_tree_flags(cmd, *o, *quota);
  // quota holds what CLI11 writes when it parses: the action keeps it alive.
  return [o, quota, quota_opt]() {
    warn_odps_quota(quota_opt);
    o->ids = tdm::tree_ids_from_environment();
    tdm::cluster_tree(*o);
    return 0;
  };
}

}  // namespace tzrec::cli
