// TDM retrieval's tree walk (TorchEasyRec tzrec/tools/tdm/retrieval.py with TDMPredictSampler,
// docs/tzrec-compatibility.md §3.5): the predict tree (node table + predict edge table) and the
// per-level beam search over it, with the scoring left to the caller (no torch).
//
// PredictTree: the node table of data_config.tdm_sampler (item_input_path, attrs as
// tdm_sampler.h reads them: tree_level first, the item id second) and its predict edge table
// (predict_edge_input_path: "-1 -> root", then parent -> child edges; with hashed ids the keys
// are hashes of the ids' text, "-1" included). A node's children are its
// edges in file order. Checked when loading (DataError naming the file and the node): exactly one
// root edge; an edge to or from a node missing from the node table; a child not one level below
// its parent; the number of levels not len(layer_num_sample) (ConfigError: the tree and the
// config do not match).
//
// Beam search for B users, n = n_cluster, R = recall_num, L = tree levels:
//   first = ceil(log_n(2·n·R)) (floating-point logs, as Python's math.log), at most L - 1;
//   the beam starts at the root and takes every child of its nodes, unscored, until level
//   first - 1; then for each level first .. L - 1 the beam's children are the candidates, scored
//   by the caller per user; below the last level the beam keeps the 2R best (all when fewer;
//   ties to the earlier candidate), on the last level the R best distinct nodes. A node without
//   children (a leaf above the last level, for n > 2) stays a candidate itself.
//   TorchEasyRec's graphlearn sampler draws exactly n children per node in random order,
//   repeating children of nodes with fewer and padding childless ones with a default id; here
//   every child is taken once, in file order.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "data/sampler_table.h"
#include "tdm/tdm_sampler.h"

namespace tzrec::tdm {

class PredictTree {
 public:
  // `config`: tdm_sampler_config() of the pipeline (attr_fields with tree_level and the id).
  static std::shared_ptr<const PredictTree> load(const TdmSamplerConfig& config);

  const TdmSamplerConfig& config() const { return config_; }
  const data::NodeTable& nodes() const { return *nodes_; }
  int num_levels() const { return num_levels_; }
  int64_t root() const { return root_; }
  int level_of(int64_t node) const { return levels_[static_cast<size_t>(node)]; }
  const std::vector<int64_t>& children(int64_t node) const { return children_[static_cast<size_t>(node)]; }
  // Attribute k (index into config().attr_fields) of a node.
  std::string_view attr(int64_t node, size_t k) const;

  // A tree built in memory (tests): node keys, levels, children (node indices), the root.
  static std::shared_ptr<const PredictTree> from_parts(std::vector<int64_t> keys, std::vector<int> levels,
                                                       std::vector<std::vector<int64_t>> children, int64_t root);
  int64_t key(int64_t node) const { return nodes_ ? nodes_->key(node) : keys_[static_cast<size_t>(node)]; }

  PredictTree() = default;  // use load()

 private:
  TdmSamplerConfig config_;
  std::shared_ptr<const data::NodeTable> nodes_;
  std::vector<int64_t> keys_;  // from_parts only
  std::vector<int> levels_;
  std::vector<std::vector<int64_t>> children_;
  int64_t root_ = -1;
  int num_levels_ = 0;
};

// Level where scoring starts (see above).
int first_recall_level(int n_cluster, int recall_num, int num_levels);

// Scores the candidates of every user (node indices, candidates[b] for user b) at `level`:
// returns one vector of scores per user, of the same lengths (higher is better).
using CandidateScorer =
    std::function<std::vector<std::vector<float>>(int level, const std::vector<std::vector<int64_t>>& candidates)>;

// The R retrieved nodes (indices, best first) of each of `users` users (see above).
std::vector<std::vector<int64_t>> beam_search(const PredictTree& tree, int64_t users, int n_cluster, int recall_num,
                                              const CandidateScorer& score);

}  // namespace tzrec::tdm
