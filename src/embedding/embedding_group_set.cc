#include "embedding/embedding_group_set.h"

#include <utility>

namespace tzrec::embedding {

void EmbeddingGroupSet::add(std::string module_path, std::string table_prefix, EmbeddingGroup group) {
  for (const Member& m : members_) {
    TORCH_CHECK(m.table_prefix != table_prefix, "EmbeddingGroupSet: table prefix '", table_prefix, "' used twice");
  }
  members_.push_back(Member{std::move(module_path), std::move(table_prefix), std::move(group)});
}

std::vector<EmbeddingTable> EmbeddingGroupSet::tables() {
  std::vector<EmbeddingTable> out;
  for (Member& m : members_) {
    for (EmbeddingTable& t : m.group->tables()) {
      t.name = m.table_prefix + t.name;
      out.push_back(std::move(t));
    }
  }
  return out;
}

std::vector<EmbeddingGroupImpl::Collection> EmbeddingGroupSet::collections() const {
  std::vector<EmbeddingGroupImpl::Collection> out;
  for (const Member& m : members_) {
    for (EmbeddingGroupImpl::Collection& c : m.group->collections()) {
      c.prefix = m.table_prefix + c.prefix;
      out.push_back(std::move(c));
    }
  }
  return out;
}

std::vector<std::pair<std::string, ZchEmbeddingBagCollection>> EmbeddingGroupSet::zch_collections() const {
  std::vector<std::pair<std::string, ZchEmbeddingBagCollection>> out;
  for (const Member& m : members_) {
    for (auto& [prefix, mc] : m.group->zch_collections()) out.emplace_back(m.table_prefix + prefix, mc);
  }
  return out;
}

std::vector<std::pair<std::string, DynamicEmbeddingBagCollection>> EmbeddingGroupSet::dynamic_collections() const {
  std::vector<std::pair<std::string, DynamicEmbeddingBagCollection>> out;
  for (const Member& m : members_) {
    for (auto& [prefix, d] : m.group->dynamic_collections()) out.emplace_back(m.table_prefix + prefix, d);
  }
  return out;
}

std::vector<std::string> EmbeddingGroupSet::table_names() const {
  std::vector<std::string> out;
  for (const EmbeddingGroupImpl::Collection& c : collections()) {
    for (const TableConfig& t : c.ebc->table_configs()) out.push_back(c.prefix + t.name);
  }
  return out;
}

std::string EmbeddingGroupSet::parameter_name_of(const std::string& table) const {
  // The member with the longest matching prefix ("" matches every name).
  const Member* best = nullptr;
  for (const Member& m : members_) {
    if (table.rfind(m.table_prefix, 0) != 0) continue;
    if (best == nullptr || m.table_prefix.size() > best->table_prefix.size()) best = &m;
  }
  TORCH_CHECK(best != nullptr, "EmbeddingGroupSet: no group holds table ", table);
  return best->module_path + "." + best->group->parameter_name_of(table.substr(best->table_prefix.size()));
}

void EmbeddingGroupSet::reload_embedding_state() {
  for (Member& m : members_) {
    for (auto& [prefix, mc] : m.group->zch_collections()) mc->reload_zch_state();
    for (auto& [prefix, dynamic] : m.group->dynamic_collections()) dynamic->reload_state();
  }
}

void EmbeddingGroupSet::sync_embedding_state() {
  for (Member& m : members_) {
    for (auto& [prefix, dynamic] : m.group->dynamic_collections()) dynamic->sync_state();
  }
}

void EmbeddingGroupSet::release_embedding_state() {
  for (Member& m : members_) {
    for (auto& [prefix, dynamic] : m.group->dynamic_collections()) dynamic->release_state_buffers();
  }
}

FusedOptimizerGroup& EmbeddingGroupSet::enable_fused_optimizer(const FusedOptimizerOptions& options) {
  TORCH_CHECK(!fused_, "enable_fused_optimizer called twice");
  std::vector<FusedEmbeddingBags*> members;
  std::vector<std::string> prefixes;
  for (EmbeddingGroupImpl::Collection& c : collections()) {
    members.push_back(&c.ebc->enable_fused_optimizer(options));
    prefixes.push_back(c.prefix);
  }
  fused_ = std::make_unique<FusedOptimizerGroup>(std::move(members), std::move(prefixes));
  return *fused_;
}

}  // namespace tzrec::embedding
