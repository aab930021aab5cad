// The flags `tzrec tdm_init_tree` and `tzrec tdm_cluster_tree` share (TorchEasyRec's
// tools/tdm/init_tree.py and cluster_tree.py): the node attributes and the output files.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/odps_quota_flag.h"

namespace tzrec::cli {

// Options: tdm::InitTreeOptions or tdm::ClusterTreeOptions (same field names). Returns the
// MaxCompute-only flag, to be reported by warn_odps_quota() when given.
template <class Options>
CLI::Option* add_tdm_tree_flags(CLI::App* cmd, Options& o, std::string& odps_quota) {
  cmd->add_option("--attr_fields", o.attr_fields,
                  "comma-separated item feature columns; a non-leaf node takes the most frequent value of its items");
  cmd->add_option("--raw_attr_fields", o.raw_attr_fields,
                  "comma-separated numeric item feature columns; a non-leaf node takes the mean of its items");
  cmd->add_option("--attr_delimiter", o.attr_delimiter, "attribute delimiter in the node table")
      ->capture_default_str();
  cmd->add_option("--tree_output_dir", o.tree_output_dir, "directory for the serving tree (serving_tree)");
  cmd->add_option("--node_edge_output_file", o.node_edge_output_file,
                  "directory for node_table.txt, edge_table.txt, predict_edge_table.txt and node_feature/");
  cmd->add_option("--n_cluster", o.n_cluster, "children per tree node")->capture_default_str();
  return add_odps_quota_flag(cmd, odps_quota);
}

}  // namespace tzrec::cli
