// `tzrec tdm_init_tree`: the initial TDM tree from an item table (TorchEasyRec's
// tzrec/tools/tdm/init_tree.py flags; tdm/tree_io.h).
#include "cli/commands.h"
#include "cli/tdm_tree_flags.h"
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
  auto* quota_opt = add_tdm_tree_flags(cmd, *o, *quota);
  // quota holds what CLI11 writes when it parses: the action keeps it alive.
  return [o, quota, quota_opt]() {
    warn_odps_quota(quota_opt);
    o->ids = tdm::tree_ids_from_environment();
    tdm::init_tree(*o);
    return 0;
  };
}

}  // namespace tzrec::cli
