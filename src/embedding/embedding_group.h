// EmbeddingGroup: feature groups → one [B, group_total_dim] tensor per group
// (docs/tzrec-compatibility.md §5.7).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "embedding/embedding_bag_collection.h"
#include "embedding/fused_optimizer_group.h"
#include "embedding/sequence_embedding_group.h"
#include "embedding/embedding_config.h"
#include "sparse/batch.h"

namespace tzrec::embedding {

enum class GroupType { kDeep, kWide, kSequence };

struct FeatureGroupConfig {
  std::string group_name;
  GroupType type = GroupType::kDeep;
  std::vector<std::string> feature_names;
  // Where the group is configured ("model_config.feature_groups[2]"): errors name it. Empty for
  // groups not read from a config (errors then name the group).
  std::string path;
};

// Holds the data group's EmbeddingBagCollection as submodule "ebc" (state-dict keys
// "ebc.embedding_bags.<table>.weight" below "emb_impls.__BASE__").
class EmbeddingGroupDataImpl : public torch::nn::Module {
 public:
  explicit EmbeddingGroupDataImpl(EmbeddingBagCollection ebc);
  EmbeddingBagCollection ebc;
};
TORCH_MODULE(EmbeddingGroupData);

class EmbeddingGroupImpl : public torch::nn::Module {
 public:
  // Tables per docs/tzrec-compatibility.md §5.7: name = embedding_name (default
  // "{feature}_emb"); in a WIDE group name + "_wide" with dim wide_embedding_dim (and init
  // wide_init_fn); the same name ⇒ one shared table (rows/dims must agree, else ConfigError
  // naming both features). Dense (non-sparse) features in a DEEP group contribute their raw
  // value_dim floats from batch.dense_features; dense features in a WIDE group → ConfigError.
  // Unknown feature names, empty or duplicate group names → ConfigError naming the group.
  EmbeddingGroupImpl(std::vector<FeatureSpec> features, std::vector<FeatureGroupConfig> groups,
                     int64_t wide_embedding_dim, const std::string& wide_init_fn = "");

  // group name → [B, group_total_dim] float32: concatenation in feature_names order; SEQUENCE
  // groups (sequence_embedding_group.h) → "<g>.query", "<g>.sequence", "<g>.sequence_length".
  std::map<std::string, torch::Tensor> forward(const sparse::Batch& batch);

  // Throw tzrec::ConfigError for an unknown group.
  int64_t group_total_dim(const std::string& group) const;
  std::vector<int64_t> group_feature_dims(const std::string& group) const;  // per feature, in order
  std::vector<std::string> group_names() const;  // DEEP / WIDE groups, in config order
  bool has_group(const std::string& group) const { return group_index_.count(group) > 0; }
  // The SEQUENCE groups' embeddings; nullptr without SEQUENCE groups.
  SequenceEmbeddingGroup sequence_groups() const { return sequence_; }

  // The DEEP / WIDE groups' tables, then the SEQUENCE groups', named "sequence.<table>" (their own
  // tables even when a DEEP / WIDE table has the same name, as in TorchEasyRec).
  std::vector<EmbeddingTable> tables();
  static constexpr const char* kSequenceTablePrefix = "sequence.";
  // State-dict name of a DEEP / WIDE table's weight below this module:
  // "emb_impls.__BASE__.ebc.embedding_bags.<table>.weight".
  static std::string table_parameter_name(const std::string& table);
  // The same for any table of tables(); SEQUENCE tables are
  // "seq_emb_impls.__BASE__.ec_dict.<dim>.embeddings.<table>.weight" as in TorchEasyRec.
  std::string parameter_name_of(const std::string& table) const;
  // Fused mode (EmbeddingBagCollectionImpl::enable_fused_optimizer) for every collection, with one
  // optimizer configuration; the group of their fused operators is owned by this module (the
  // SEQUENCE tables' optimizer state keys start with "sequence.").
  FusedOptimizerGroup& enable_fused_optimizer(const FusedOptimizerOptions& options);
  // The DEEP / WIDE groups' collection (what the sharding planner and sharded runs see).
  EmbeddingBagCollection ebc() const { return data_->ebc; }

 private:
  struct Slot {          // one entry of a group's output
    bool is_sparse;
    std::string key;     // bag key in the EBC output (sparse) or dense feature name
    int64_t dim;
  };
  struct Group {
    std::string name;
    std::vector<Slot> slots;
    int64_t total_dim = 0;
  };
  const Group& group(const std::string& name) const;

  std::vector<Group> groups_;
  std::map<std::string, size_t> group_index_;
  torch::nn::ModuleDict emb_impls_{nullptr};  // "__BASE__" → EmbeddingGroupData
  EmbeddingGroupData data_{nullptr};
  torch::nn::ModuleDict seq_emb_impls_{nullptr};  // "__BASE__" → SequenceEmbeddingGroup
  SequenceEmbeddingGroup sequence_{nullptr};
  std::unique_ptr<FusedOptimizerGroup> fused_;
};
TORCH_MODULE(EmbeddingGroup);

}  // namespace tzrec::embedding
