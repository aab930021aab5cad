#include "tdm/beam_search.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <unordered_set>

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"

namespace tzrec::tdm {
namespace {

// Indices of the `keep` best scores (descending, ties to the earlier position).
std::vector<size_t> best_positions(const std::vector<float>& scores, size_t keep) {
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  if (order.size() > keep) order.resize(keep);
  return order;
}

}  // namespace

std::string_view PredictTree::attr(int64_t node, size_t k) const {
  return node_attr(nodes_->attrs(node), config_.attr_delimiter, k);
}

std::shared_ptr<const PredictTree> PredictTree::load(const TdmSamplerConfig& config) {
  auto t = std::make_shared<PredictTree>();
  t->config_ = config;
  const std::string& path = config.config_path;
  if (config.predict_edge_input_path.empty()) {
    throw ConfigError(path + ".predict_edge_input_path: is not set; retrieval walks the tree by its parent -> child "
                             "edges (predict_edge_table.txt of tdm_init_tree / tdm_cluster_tree)");
  }
  const TreeNodes tree = TreeNodes::load(config);
  t->nodes_ = tree.table_ptr();
  t->levels_ = tree.levels();
  t->num_levels_ = tree.num_levels();
  const data::NodeTable& nodes = *t->nodes_;
  const int64_t n = nodes.size();
  const data::SamplerTableOptions opts = table_options(config, path + ".predict_edge_input_path", 0);
  const auto edges = data::EdgeTable::load(config.predict_edge_input_path, data::EdgeTable::Order::kFileOrder, opts);
  t->children_.resize(static_cast<size_t>(n));
  const std::string& file = config.predict_edge_input_path;
  const int64_t sentinel = data::sampler_key_of_int(-1, config.hash_ids);  // graphlearn's handle on the root
  for (int64_t src_key : edges->src_keys()) {
    const auto range = edges->edges_of(src_key);
    const int64_t src = nodes.find(src_key);
    if (src < 0) {
      throw DataError(fmt::format("{} ({}): edge source {} is not in the node table {}; the tables come from different "
                                  "trees",
                                  file, opts.config_field, tree.name(src_key), config.item_input_path));
    }
    for (int64_t e = range.begin; e < range.end; ++e) {
      const int64_t dst = nodes.find(edges->dst(e));
      if (dst < 0) {
        throw DataError(fmt::format("{} ({}): edge {} -> {}: the child is not in the node table {}; the tables come "
                                    "from different trees",
                                    file, opts.config_field, tree.name(src_key), tree.name(edges->dst(e)),
                                    config.item_input_path));
      }
      if (src_key == sentinel) {
        if (t->root_ >= 0 || t->levels_[static_cast<size_t>(dst)] != 0) {
          throw DataError(fmt::format("{} ({}): edge -1 -> {}: the sentinel -1 must point to the one root (level 0)",
                                      file, opts.config_field, tree.name(edges->dst(e))));
        }
        t->root_ = dst;
        continue;
      }
      if (t->levels_[static_cast<size_t>(dst)] != t->levels_[static_cast<size_t>(src)] + 1) {
        throw DataError(fmt::format("{} ({}): edge {} -> {}: the child is on level {}, its parent on level {}; the "
                                    "tables come from different trees",
                                    file, opts.config_field, tree.name(src_key), tree.name(edges->dst(e)),
                                    t->levels_[static_cast<size_t>(dst)],
                                    t->levels_[static_cast<size_t>(src)]));
      }
      t->children_[static_cast<size_t>(src)].push_back(dst);
    }
  }
  if (t->root_ < 0) {
    throw DataError(fmt::format("{} ({}): no edge from -1 to the root; use the predict_edge_table.txt of "
                                "tdm_init_tree / tdm_cluster_tree",
                                file, opts.config_field));
  }
  return t;
}

std::shared_ptr<const PredictTree> PredictTree::from_parts(std::vector<int64_t> keys, std::vector<int> levels,
                                                           std::vector<std::vector<int64_t>> children, int64_t root) {
  auto t = std::make_shared<PredictTree>();
  t->keys_ = std::move(keys);
  t->levels_ = std::move(levels);
  t->children_ = std::move(children);
  t->root_ = root;
  t->num_levels_ = *std::max_element(t->levels_.begin(), t->levels_.end()) + 1;
  return t;
}

int first_recall_level(int n_cluster, int recall_num, int num_levels) {
  const double x = 2.0 * n_cluster * recall_num;
  const int first = static_cast<int>(std::ceil(std::log(x) / std::log(static_cast<double>(n_cluster))));
  return std::max(1, std::min(first, num_levels - 1));
}

std::vector<std::vector<int64_t>> beam_search(const PredictTree& tree, int64_t users, int n_cluster, int recall_num,
                                              const CandidateScorer& score) {
  if (recall_num < 1) throw UsageError(fmt::format("--recall_num: {} is below 1", recall_num));
  const int levels = tree.num_levels();
  auto expand = [&](const std::vector<int64_t>& beam) {
    std::vector<int64_t> out;
    for (int64_t node : beam) {
      const auto& ch = tree.children(node);
      if (ch.empty()) {
        out.push_back(node);
      } else {
        out.insert(out.end(), ch.begin(), ch.end());
      }
    }
    return out;
  };
  std::vector<std::vector<int64_t>> beams(static_cast<size_t>(users), std::vector<int64_t>{tree.root()});
  if (levels <= 1) return beams;
  const int first = first_recall_level(n_cluster, recall_num, levels);
  for (int level = 1; level < first; ++level) {
    for (auto& beam : beams) beam = expand(beam);
  }
  for (int level = first; level < levels; ++level) {
    std::vector<std::vector<int64_t>> candidates(beams.size());
    for (size_t b = 0; b < beams.size(); ++b) candidates[b] = expand(beams[b]);
    const std::vector<std::vector<float>> scores = score(level, candidates);
    if (scores.size() != candidates.size()) throw std::logic_error("beam_search: one score vector per user");
    const bool last = level == levels - 1;
    for (size_t b = 0; b < beams.size(); ++b) {
      if (scores[b].size() != candidates[b].size()) throw std::logic_error("beam_search: one score per candidate");
      std::vector<int64_t> kept;
      if (!last) {
        for (size_t p : best_positions(scores[b], 2 * static_cast<size_t>(recall_num))) kept.push_back(candidates[b][p]);
      } else {
        std::unordered_set<int64_t> seen;
        for (size_t p : best_positions(scores[b], scores[b].size())) {
          if (kept.size() >= static_cast<size_t>(recall_num)) break;
          if (seen.insert(candidates[b][p]).second) kept.push_back(candidates[b][p]);
        }
      }
      beams[b] = std::move(kept);
    }
  }
  return beams;
}

}  // namespace tzrec::tdm
