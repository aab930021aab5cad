// EmbeddingGroupSet: every EmbeddingGroup of one model, each at its module path — one for rank
// and multi-task models ("embedding_group"), one per tower for two-tower match models
// ("user_tower.embedding_group", "item_tower.embedding_group", as TorchEasyRec's DSSM). Training,
// sharding, checkpoints and export drive the tables of all of them through this view.
//
// Table names: a member's tables() names with the member's table prefix in front ("" for the
// model-level group, "<tower>." for a tower's), so names are unique across members.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "embedding/embedding_group.h"
#include "embedding/fused_optimizer_group.h"

namespace tzrec::embedding {

class EmbeddingGroupSet {
 public:
  struct Member {
    std::string module_path;   // below the model: "embedding_group", "user_tower.embedding_group"
    std::string table_prefix;  // "" or "<tower>."
    EmbeddingGroup group;
  };

  // Prefixes must be distinct (programmer error otherwise).
  void add(std::string module_path, std::string table_prefix, EmbeddingGroup group);
  const std::vector<Member>& members() const { return members_; }
  bool empty() const { return members_.empty(); }

  // Every table of every member, named "<table prefix><name in the member>".
  std::vector<EmbeddingTable> tables();
  // The names of tables() from the collections' configs (also while table allocation is deferred).
  std::vector<std::string> table_names() const;
  // Every collection of every member, its prefix "<table prefix><collection prefix>".
  std::vector<EmbeddingGroupImpl::Collection> collections() const;
  // Every zero-collision hashed collection of every member, with the prefix of its tables in
  // tables() ("<table prefix><collection prefix>").
  std::vector<std::pair<std::string, ZchEmbeddingBagCollection>> zch_collections() const;
  // Every dynamic embedding collection of every member, with the prefix of its tables.
  std::vector<std::pair<std::string, DynamicEmbeddingBagCollection>> dynamic_collections() const;
  // State-dict name below the model of a table of tables():
  // "<module path>.<member's parameter_name_of>", e.g.
  // "user_tower.embedding_group.emb_impls.__BASE__.ebc.embedding_bags.user_id_emb.weight".
  std::string parameter_name_of(const std::string& table) const;
  // Fused mode for every collection with one optimizer configuration; the group of their fused
  // operators is owned here (state keys "<collection prefix><table>.<state>").
  FusedOptimizerGroup& enable_fused_optimizer(const FusedOptimizerOptions& options);
  // After the model's buffers were restored in place: ZchEmbeddingBagCollection::reload_zch_state
  // of every zero-collision hashed collection and DynamicEmbeddingBagCollection::reload_state of
  // every dynamic one.
  void reload_embedding_state();
  // Before the model's buffers are read (checkpoints, exports): DynamicEmbeddingBagCollection::
  // sync_state of every dynamic collection.
  void sync_embedding_state();
  // After they were read: DynamicEmbeddingBagCollection::release_state_buffers of every dynamic
  // collection (their memory back to the OS until the next sync_embedding_state).
  void release_embedding_state();

 private:
  std::vector<Member> members_;
  std::unique_ptr<FusedOptimizerGroup> fused_;
};

}  // namespace tzrec::embedding
