// EmbeddingGroup: feature groups → one [B, group_total_dim] tensor per group
// (docs/tzrec-compatibility.md §5.7).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "embedding/dense_embedding_collection.h"
#include "embedding/embedding_bag_collection.h"
#include "embedding/embedding_config.h"
#include "embedding/sequence_embedding_group.h"
#include "embedding/sequence_encoder.h"
#include "embedding/dynamic_embedding_bag_collection.h"
#include "embedding/zch_embedding_bag_collection.h"
#include "sparse/batch.h"

namespace tzrec::embedding {

enum class GroupType { kDeep, kWide, kSequence, kJaggedSequence };

// One entry of a DEEP group's sequence_encoders: the sequence group it reads.
struct SequenceEncoderConfig {
  std::string input;  // empty: unset (a group with one sequence group defaults to it)
  std::string path;   // "model_config.feature_groups[0].sequence_encoders[1]", for errors
};

struct FeatureGroupConfig {
  std::string group_name;
  GroupType type = GroupType::kDeep;
  std::vector<std::string> feature_names;
  // Where the group is configured ("model_config.feature_groups[2]"): errors name it. Empty for
  // groups not read from a config (errors then name the group).
  std::string path;
  // DEEP groups only (docs/tzrec-compatibility.md §5.9): sequence groups nested in the group
  // (group_name may be empty when there is one: it then takes the DEEP group's name; path
  // "<path>.sequence_groups[k]") and the encoders whose outputs are appended to the group.
  std::vector<SequenceGroupConfig> sequence_groups;
  std::vector<SequenceEncoderConfig> sequence_encoders;
  // Appended to the group's table names as "_<suffix>" (empty: none), after a WIDE group's "_wide":
  // the same features in two groups with different suffixes look up separate tables.
  std::string embedding_name_suffix;
};

// Holds one data group's EmbeddingBagCollection as submodule "ebc" (state-dict keys
// "ebc.embedding_bags.<table>.weight" below "emb_impls.<data group>"), its zero-collision hashed
// tables (docs/tzrec-compatibility.md §5.12), if any, as "mc_ebc" (TorchEasyRec's
// ManagedCollisionEmbeddingBagCollection: "mc_ebc._embedding_module.embedding_bags.<table>.weight",
// "mc_ebc._managed_collision_collection._managed_collision_modules.<table>.<buffer>") and, when a DEEP group of
// that data group has a dense feature with a dense embedding, its DenseEmbeddingCollection as
// "dense_ec" ("dense_ec.dense_embs.<group key>.meta_emb_<feature>.weight", ...). Dynamic
// embedding tables (docs/tzrec-compatibility.md §5.13) are in "dynamicemb_ebc"
// (dynamic_embedding_bag_collection.h).
class EmbeddingGroupDataImpl : public torch::nn::Module {
 public:
  // `dense_ec`, `mc_ebc` and `dynamicemb_ebc` may be nullptr (then no such submodule).
  EmbeddingGroupDataImpl(EmbeddingBagCollection ebc, DenseEmbeddingCollection dense_ec,
                         ZchEmbeddingBagCollection mc_ebc = nullptr,
                         DynamicEmbeddingBagCollection dynamicemb_ebc = nullptr);
  EmbeddingBagCollection ebc;
  DenseEmbeddingCollection dense_ec{nullptr};
  ZchEmbeddingBagCollection mc_ebc{nullptr};
  DynamicEmbeddingBagCollection dynamicemb_ebc{nullptr};
};
TORCH_MODULE(EmbeddingGroupData);

class EmbeddingGroupImpl : public torch::nn::Module {
 public:
  // Tables per docs/tzrec-compatibility.md §5.7: name = embedding_name (default
  // "{feature}_emb"); in a WIDE group name + "_wide" with dim wide_embedding_dim (and init
  // wide_init_fn); the same name ⇒ one shared table (rows/dims must agree, else ConfigError
  // naming both features). Dense (non-sparse) features in a DEEP group contribute their raw
  // value_dim floats from batch.dense_features, or, with a dense embedding (autodis / mlp,
  // docs/tzrec-compatibility.md §5.11), their embedding_dim-wide embedding computed by the
  // DenseEmbeddingCollection of all DEEP groups' such features (a feature in two groups shares
  // it); dense features in a WIDE group, and dense-embedded ones in SEQUENCE or nested sequence
  // groups (TorchEasyRec's sequence groups do not embed them) → ConfigError.
  // Unknown feature names, empty or duplicate group names → ConfigError naming the group.
  // Data groups (docs/tzrec-compatibility.md §6.5): the DEEP / WIDE groups over features of data
  // group __NEG__ (FeatureSpec::neg, the sampled items' features) read the batch's neg_*
  // features and output [neg_batch_size, group_total_dim]; their tables form a collection of
  // their own ("emb_impls.__NEG__"), as in TorchEasyRec. A group mixing both data groups →
  // ConfigError; __NEG__ features in sequence groups → NotSupportedError.
  // A DEEP group's sequence_groups are looked up as SEQUENCE groups are; its sequence_encoders are
  // built by `encoder_factory` (required when a group has encoders) once the sequence groups'
  // widths are known. The rules of TorchEasyRec's nested sequence groups (§5.9) are checked here:
  // only DEEP groups have them, groups and encoders come together, several sequence groups need
  // names, an encoder's input names one of its group's sequence groups, each of which has an
  // encoder, and sequence group names are unique (with the SEQUENCE groups').
  EmbeddingGroupImpl(std::vector<FeatureSpec> features, std::vector<FeatureGroupConfig> groups,
                     int64_t wide_embedding_dim, const std::string& wide_init_fn = "",
                     const SequenceEncoderFactory& encoder_factory = {});

  // group name → [B, group_total_dim] float32: concatenation in feature_names order, then the
  // outputs of the group's sequence encoders; SEQUENCE groups and the sequence groups nested in
  // DEEP groups (sequence_embedding_group.h) → "<g>.query", "<g>.sequence", "<g>.sequence_length".
  std::map<std::string, torch::Tensor> forward(const sparse::Batch& batch);

  // Throw tzrec::ConfigError for an unknown group.
  int64_t group_total_dim(const std::string& group) const;
  // Per feature in order, then per sequence encoder (as TorchEasyRec's group_feature_dims).
  std::vector<int64_t> group_feature_dims(const std::string& group) const;
  std::vector<std::string> group_names() const;  // DEEP / WIDE groups, in config order
  bool has_group(const std::string& group) const { return group_index_.count(group) > 0; }
  // The zero-collision hashed collections (one per data group with zch tables, then the sequence
  // groups' per embedding dim), with the prefix of their tables in tables() ("", "neg." or
  // "sequence.").
  std::vector<std::pair<std::string, ZchEmbeddingBagCollection>> zch_collections() const;
  // The dynamic embedding collections (one per data group with dynamic tables), with the prefix of
  // their tables in tables().
  std::vector<std::pair<std::string, DynamicEmbeddingBagCollection>> dynamic_collections() const;
  // The SEQUENCE groups' and nested sequence groups' embeddings; nullptr without any.
  SequenceEmbeddingGroup sequence_groups() const { return sequence_; }

  // The DEEP / WIDE groups' tables (those of data group __NEG__ named "neg.<table>"), then the
  // SEQUENCE groups', named "sequence.<table>" (their own tables even when a DEEP / WIDE table has
  // the same name, as in TorchEasyRec).
  std::vector<EmbeddingTable> tables();
  static constexpr const char* kSequenceTablePrefix = "sequence.";
  static constexpr const char* kNegTablePrefix = "neg.";
  // State-dict name below this module of a table of tables():
  // "emb_impls.__BASE__.ebc.embedding_bags.<table>.weight" ("emb_impls.__NEG__..." for "neg.<t>";
  // a zero-collision hashed table "emb_impls.<data group>.mc_ebc._embedding_module.embedding_bags.<table>.weight");
  // SEQUENCE tables are "seq_emb_impls.__BASE__.ec_dict.<dim>.embeddings.<table>.weight" as in
  // TorchEasyRec.
  std::string parameter_name_of(const std::string& table) const;
  // Every collection with the prefix its tables carry in tables(): the DEEP / WIDE groups' (""
  // for data group __BASE__, "neg." for __NEG__; the zero-collision hashed tables' inner collection
  // after the plain one of the same data group) first, then the sequence groups' (one per
  // embedding dim, "sequence."). What fused and sharded runs drive.
  struct Collection {
    std::string prefix;
    EmbeddingBagCollection ebc;
    // "zch" / "dynamicemb" for the inner collection of a zero-collision hashed / dynamic one
    // (sharded row-wise only), else empty.
    std::string remapping;
  };
  std::vector<Collection> collections() const;

 private:
  struct Slot {          // one entry of a group's output
    bool is_sparse;
    std::string key;     // bag key in the EBC output (sparse) or dense feature name
    int64_t dim;
    bool embedded = false;  // a dense feature's dense embedding (dense_ec), not its raw values
  };
  struct Group {
    std::string name;
    std::vector<Slot> slots;
    int64_t total_dim = 0;
    std::vector<SequenceEncoderHandle> encoders;  // outputs appended after the slots
  };
  // The DEEP / WIDE groups of one data group and their collection.
  struct DataGroup {
    bool neg = false;  // __NEG__: reads the batch's neg_* features
    EmbeddingGroupData data{nullptr};
    std::vector<size_t> groups;  // indices into groups_
    std::set<std::string> zch_tables;  // tables of data->mc_ebc
    std::set<std::string> dynamic_tables;  // tables of data->dynamicemb_ebc
  };
  const Group& group(const std::string& name) const;
  // Outputs of the DEEP / WIDE groups of `dg` (before sequence encoders) into *out.
  void forward_data_group(DataGroup& dg, const sparse::Batch& batch,
                          std::map<std::string, torch::Tensor>* out);

  std::vector<Group> groups_;  // config order
  std::map<std::string, size_t> group_index_;
  std::vector<DataGroup> data_groups_;  // in the order of their first group
  torch::nn::ModuleDict emb_impls_{nullptr};  // "__BASE__" / "__NEG__" → EmbeddingGroupData
  torch::nn::ModuleDict seq_emb_impls_{nullptr};  // "__BASE__" → SequenceEmbeddingGroup
  SequenceEmbeddingGroup sequence_{nullptr};
  torch::nn::ModuleDict seq_encoders_{nullptr};  // "_group_name_to_seq_encoders": group → ModuleList
};
TORCH_MODULE(EmbeddingGroup);

}  // namespace tzrec::embedding
