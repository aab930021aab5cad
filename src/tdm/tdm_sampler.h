// TorchEasyRec's TDMSampler in process (tzrec/datasets/sampler.py TDMSampler over graphlearn;
// docs/tzrec-compatibility.md §6.5): for each training row's item (a leaf of the tree), its
// ancestors as positives and per tree level `layer_num_sample[level]` negatives drawn from the
// other nodes of that level (no torch).
//
// Tables (graphlearn text or Parquet, data/sampler_table.h), as `tzrec tdm_init_tree` writes them:
//   item_input_path  node table "id, weight, attrs": attrs = attr_fields values joined by
//                    attr_delimiter, where attr_fields is the config's list with "tree_level"
//                    put first and item_id_field second when they are not there already
//                    (TorchEasyRec inserts them the same way). Levels: root 0 ... leaves L - 1;
//                    the row with level -1 is graphlearn's sentinel (it is drawn only by the
//                    fallback below, as in graphlearn).
//   edge_input_path  leaf -> ancestor edges, L - 2 per leaf (every level but the root's and
//                    its own).
// Checked when loading (DataError naming the file, the line and the node): a level that is not
// an integer, an edge to a node missing from the node table, a source that is not on the leaf
// level, an ancestor not strictly between the root and the leaves, two ancestors on one level,
// a wrong number of ancestors. ConfigError: layer_num_sample whose length is not the number of
// tree levels L, or whose first (root) entry is not 0.
//
// One call, for B item ids (keys of leaves):
//   remain levels: all of 1 .. L - 2, or with remain_ratio < 1 round_half_even(remain_ratio *
//     (L - 2)) of them drawn without replacement with probabilities by probability_type (UNIFORM
//     equal; ARITHMETIC ∝ level; RECIPROCAL ∝ 1 / (L - 1 - level)), one draw per call, sorted.
//   positives: per row, its ancestors on the remain levels, in level order.
//   negatives: per row, for each remain level and then the leaf level, layer_num_sample[level]
//     nodes (graphlearn's conditional "node_weight" negative sampler with samplewise_unique):
//     per level one exclusion set for the whole call, growing over the rows: row j first adds
//     its positive on that level, then draws rounds of `n` nodes of the positive's level by node
//     weight, keeping those not excluded (and excluding them from then on); after 5 rounds
//     (graphlearn's retry limit: 4 full rounds and one draw) it falls back to draws over the
//     whole node table by weight, and after 5 more rounds the exclusion set is emptied.
//   Layout: B * |remain| positives (row-major by batch row), B * (Σ n over remain and leaf level)
//   negatives (row-major by batch row, levels in order).
// Randomness: one SamplerRng stream per call from the caller's seed (deterministic).
// Hashed ids (USE_HASH_NODE_ID=1, read when the config is read): the tables' ids and the
// batch's item ids are keys by graphlearn's hash of their text (data/sampler_table.h), as
// `tdm_init_tree` / `tdm_cluster_tree` write them under the same switch ("nonleaf#<code>" for
// non-leaf nodes). Each level's positive and negatives come by the node table's levels
// (TorchEasyRec sorts the ancestors' ids — as text when hashed — to find each level's ancestor,
// level order for the fixed-width ids those tools write). Messages name a node by its id attr.
// num_eval_sample is refused (in TorchEasyRec it truncates the TDM sample columns).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/alias_table.h"
#include "data/sampler_table.h"
#include "tdm/tree_nodes.h"

namespace tzrec::protos {
class DataConfig;
}

namespace tzrec::tdm {

struct TdmSamplerConfig {
  std::string config_path = "data_config.tdm_sampler";
  std::string item_input_path;
  std::string edge_input_path;
  std::string predict_edge_input_path;
  // With "tree_level" first and item_id_field second (tdm_sampler_config inserts them).
  std::vector<std::string> attr_fields;
  std::string item_id_field;
  std::vector<uint32_t> layer_num_sample;
  std::string attr_delimiter = ":";
  std::string field_delimiter = "\t";
  float remain_ratio = 1.0f;
  std::string probability_type = "UNIFORM";
  int load_threads = 0;
  bool hash_ids = false;  // USE_HASH_NODE_ID=1
};

// data_config.tdm_sampler, or nullopt when another or no sampler is set. Throws ConfigError for
// empty required fields and NotSupportedError for num_eval_sample.
std::optional<TdmSamplerConfig> tdm_sampler_config(const protos::DataConfig& data_config);

struct TdmSamples {
  std::vector<int> remain_levels;   // sorted
  int64_t pos_per_row = 0;          // |remain_levels|
  int64_t neg_per_row = 0;          // Σ layer_num_sample over remain levels and the leaf level
  std::vector<int64_t> pos_nodes;   // [B * pos_per_row] node indices into nodes()
  std::vector<int64_t> neg_nodes;   // [B * neg_per_row]
};

class TdmSampler {
 public:
  static std::shared_ptr<const TdmSampler> create(const TdmSamplerConfig& config);

  const TdmSamplerConfig& config() const { return config_; }
  int num_levels() const { return tree_.num_levels(); }
  const data::NodeTable& nodes() const { return tree_.table(); }
  int level_of(int64_t node) const { return tree_.level_of(node); }
  // Attribute `k` (index into config().attr_fields) of node `node`.
  std::string_view attr(int64_t node, size_t k) const { return tree_.attr(node, k); }

  // Samples for the leaves `item_keys`; `where(i)` describes row i for messages. Throws
  // DataError for an id missing from the node table or not a leaf with ancestors.
  template <typename Where>
  void sample(const std::vector<int64_t>& item_keys, uint64_t seed, const Where& where, TdmSamples* out) const {
    std::vector<int64_t> leaves(item_keys.size());
    for (size_t i = 0; i < item_keys.size(); ++i) {
      const int64_t node = tree_.table().find(item_keys[i]);
      if (node < 0 || ancestors_of(node) == nullptr) leaf_error(item_keys[i], node, where(static_cast<int64_t>(i)));
      leaves[i] = node;
    }
    sample_leaves(leaves, seed, out);
  }
  // The same with the leaves given as node indices (checked by the caller).
  void sample_leaves(const std::vector<int64_t>& leaves, uint64_t seed, TdmSamples* out) const;

  TdmSampler() = default;  // use create()

 private:
  // Ancestors of a leaf node by level (index l - 1 for level l), or nullptr.
  const int64_t* ancestors_of(int64_t node) const;
  [[noreturn]] void leaf_error(int64_t key, int64_t node, const std::string& where) const;
  std::vector<int> choose_levels(data::SamplerRng* rng) const;

  TdmSamplerConfig config_;
  TreeNodes tree_;
  std::shared_ptr<const data::EdgeTable> edges_;
  std::vector<std::vector<int64_t>> by_level_;  // node indices per level (table order)
  std::vector<data::AliasTable> level_alias_;   // per level, by node weight
  data::AliasTable all_alias_;                  // every node, by weight
  std::vector<int64_t> leaf_slot_;              // per node: its row in ancestors_, or -1
  std::vector<int64_t> ancestors_;              // [leaves * (L - 2)]
  std::vector<double> remain_p_;                // per middle level 1 .. L - 2
};

}  // namespace tzrec::tdm
