// The SEQUENCE feature groups (TorchEasyRec's SequenceEmbeddingGroupImpl): unpooled lookups of a
// group's sequence features, padded per batch, next to its query features.
//
// Per group g (docs/tzrec-compatibility.md §5.7, §5.8), in feature_names order:
//   "<g>.query"            [B, Dq]: the group's non-sequence features — a sparse feature's ids
//                          pooled per row with its pooling, a dense feature's value_dim floats;
//                          absent when the group has none
//   "<g>.sequence"         [B, T, Ds]: each sequence feature's items — a sparse feature's item
//                          embedding (the pooled embedding of an item's ids when items carry
//                          several), a dense feature's value_dim floats — right-padded with zeros
//                          to T = the batch's longest history of the group's first sequence
//                          feature (longer histories of later features are cut to T)
//   "<g>.sequence_length"  [B] int64: the first sequence feature's items per row
// A JAGGED_SEQUENCE group (TorchEasyRec's jagged sequence groups, read by its generative models)
// has the same outputs except "<g>.sequence" [Σ_b L_b, Ds]: only each row's valid items, rows in
// order (L_b = "<g>.sequence_length"[b]), no padding; one of plain features only (hstu_match's item
// tower package) has just "<g>.query" (sequence_dim() is then a ConfigError).
// Tables: every sparse feature of a SEQUENCE group looks up its own table, named embedding_name or
// "{feature}_emb", then "_<suffix>" with the group's embedding_name_suffix (features naming the
// same table share it, rows and dims must agree; a feature with different tables in two groups
// has one bag per table, "{feature}@{table}", as in TorchEasyRec); they are not the tables DEEP /
// WIDE groups pool from, as in TorchEasyRec where EmbeddingBagCollection and
// EmbeddingCollection tables are separate parameters.
//
// Lookups go through EmbeddingBagCollections whose bags are items: with T' = max(T, 1) over all
// sequence features, every sparse feature gets B·T' bags — item t of row b is bag b·T' + t, a
// query feature's row is bag b·T' — so that plain, fused (the sparse optimizer in backward) and
// sharded collections serve sequences unchanged. As TorchEasyRec's EmbeddingCollections, there is
// one per embedding dim: "ec_dict.<dim>.embeddings.<table>.weight". Zero-collision hashed tables
// (features with `zch`, docs/tzrec-compatibility.md §5.12) are in ZchEmbeddingBagCollections, one
// per embedding dim, as TorchEasyRec's ManagedCollisionEmbeddingCollections:
// "mc_ec_dict.<dim>._embedding_module.embeddings.<table>.weight" and
// "mc_ec_dict.<dim>._managed_collision_collection._managed_collision_modules.<table>.<buffer>"; their
// raw ids (every item's, and a query feature's) are remapped per table before the lookup. Dynamic
// embedding tables (docs/tzrec-compatibility.md §5.13) likewise, in DynamicEmbeddingBagCollections
// per dim: "dynamicemb_ec_dict.<dim>._embedding_module.embeddings.<table>.weight".
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "embedding/embedding_bag_collection.h"
#include "embedding/dynamic_embedding_bag_collection.h"
#include "embedding/embedding_config.h"
#include "embedding/zch_embedding_bag_collection.h"
#include "sparse/batch.h"

namespace tzrec::embedding {

struct SequenceGroupConfig {
  std::string group_name;
  std::vector<std::string> feature_names;
  std::string path;  // "model_config.feature_groups[2]", for errors
  bool jagged = false;  // a JAGGED_SEQUENCE group: "<g>.sequence" holds the valid items only
  // Appended to the group's table names as "_<suffix>" (empty: none); see table_name_with_suffix.
  std::string embedding_name_suffix;
};

class SequenceEmbeddingGroupImpl : public torch::nn::Module {
 public:
  // ConfigError (naming the group's path) for unknown features, a group without sequence
  // features, tables shared with different sizes or zch settings. Group names are checked by EmbeddingGroup.
  SequenceEmbeddingGroupImpl(const std::vector<FeatureSpec>& features, std::vector<SequenceGroupConfig> groups);

  // See above: "<g>.query", "<g>.sequence", "<g>.sequence_length" for every group.
  std::map<std::string, torch::Tensor> forward(const sparse::Batch& batch);

  // Widths of "<g>.query" (0 without query features) and "<g>.sequence" (ConfigError for an
  // unknown group).
  int64_t query_dim(const std::string& group) const;
  int64_t sequence_dim(const std::string& group) const;
  // Whether `group` has sequence features (a JAGGED_SEQUENCE group may have plain ones only).
  bool has_sequence(const std::string& group) const { return !group_of(group).sequence.empty(); }
  bool has_group(const std::string& group) const { return index_.count(group) > 0; }
  bool is_jagged(const std::string& group) const { return group_of(group).jagged; }

  // One collection per embedding dim, in increasing dim order, then the zero-collision hashed
  // collections' inner ones and the dynamic collections' inner ones (each per dim, in increasing
  // dim order).
  std::vector<EmbeddingBagCollection> collections() const;
  // The zero-collision hashed collections, in increasing dim order.
  std::vector<ZchEmbeddingBagCollection> zch_collections() const;
  // The dynamic embedding collections, in increasing dim order.
  std::vector<DynamicEmbeddingBagCollection> dynamic_collections() const;
  std::vector<EmbeddingTable> tables();
  // "ec_dict.<dim>.embeddings.<table>.weight" of one of tables() (zch tables: "mc_ec_dict.<dim>.
  // _embedding_module.embeddings.<table>.weight").
  std::string parameter_name_of(const std::string& table) const;

 private:
  struct Slot {
    std::string name;  // the feature
    std::string key;   // a sparse feature's bag output: its name, or "{name}@{table}" with several tables
    bool is_sparse = true;
    int64_t dim = 0;
  };
  struct Group {
    std::string name;
    std::string path;  // "model_config.feature_groups[i]"
    std::vector<Slot> query;
    std::vector<Slot> sequence;
    int64_t query_dim = 0;
    int64_t sequence_dim = 0;
    bool jagged = false;
  };
  const Group& group_of(const std::string& name) const;

  std::vector<Group> groups_;
  std::map<std::string, size_t> index_;
  std::map<int64_t, std::vector<std::string>> keys_by_dim_;  // input features per dim, each once
  std::map<int64_t, std::vector<std::string>> zch_keys_by_dim_;  // the same for the zch tables
  std::set<std::string> zch_table_names_;
  std::map<int64_t, std::vector<std::string>> dynamic_keys_by_dim_;  // the same for the dynamic tables
  std::set<std::string> dynamic_table_names_;
  std::map<std::string, bool> one_id_per_item_;              // sparse sequence features: value_dim 1
  std::map<std::string, bool> is_sequence_;                  // every sparse bag feature
  std::map<std::string, int64_t> table_dim_;
  std::map<int64_t, EmbeddingBagCollection> ebcs_;           // registered as "ec_dict.<dim>"
  std::map<int64_t, ZchEmbeddingBagCollection> mc_ebcs_;     // registered as "mc_ec_dict.<dim>"
  std::map<int64_t, DynamicEmbeddingBagCollection> dynamic_ebcs_;  // "dynamicemb_ec_dict.<dim>"
};
TORCH_MODULE(SequenceEmbeddingGroup);

}  // namespace tzrec::embedding
