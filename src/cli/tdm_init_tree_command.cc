// `tzrec tdm_init_tree`: the initial TDM tree from an item table (TorchEasyRec's
// tzrec/tools/tdm/init_tree.py flags; tdm/tree_io.h).
#include "base/logging.h"
#include "cli/commands.h"
#include "tdm/tree_io.h"

namespace tzrec::cli {

Action add_tdm_init_tree_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "tdm_init_tree",
      "build TDM's initial tree (items grouped by category in a complete n-ary tree) and write its node, edge and "
      "predict edge tables, node features and serving tree");
  auto o = std::make_shared<tdm::InitTreeOptions>();
  auto quota = std::make_shared<std::string>();
  cmd->add_option("--item_input_path", o->item_input_path, "item table (.csv with a header, or .parquet)");
  cmd->add_option("--item_id_field", o->item_id_field, "item id column");
  cmd->add_option("--cate_id_field", o->cate_id_field, "item category column (items are grouped by it)");
  cmd->add_option("--attr_fields", o->attr_fields,
                  "comma-separated item feature columns; a non-leaf node takes the most frequent value of its items");
  cmd->add_option("--raw_attr_fields", o->raw_attr_fields,
                  "comma-separated numeric item feature columns; a non-leaf node takes the mean of its items");
  cmd->add_option("--attr_delimiter", o->attr_delimiter, "attribute delimiter in the node table")
      ->capture_default_str();
  cmd->add_option("--tree_output_dir", o->tree_output_dir, "directory for the serving tree (serving_tree)");
  cmd->add_option("--node_edge_output_file", o->node_edge_output_file,
                  "directory for node_table.txt, edge_table.txt, predict_edge_table.txt and node_feature/");
  cmd->add_option("--n_cluster", o->n_cluster, "children per tree node")->capture_default_str();
  auto* quota_opt = cmd->add_option("--odps_data_quota_name", *quota, "MaxCompute only; no effect here");
  return [o, quota_opt]() {
    if (quota_opt->count() > 0) log::warning("--odps_data_quota_name is accepted and ignored: MaxCompute only");
    tdm::init_tree(*o);
    return 0;
  };
}

}  // namespace tzrec::cli
