#include "train/sharded_tables.h"

#include <utility>

namespace tzrec::train {

ShardedTables::ShardedTables(dist::ShardingPlan plan, std::vector<std::shared_ptr<dist::ShardedEmbeddingBags>> members)
    : plan_(std::move(plan)), members_(std::move(members)) {}

std::vector<dist::ShardedEmbeddingBags::LocalShard> ShardedTables::local_shards() const {
  std::vector<dist::ShardedEmbeddingBags::LocalShard> out;
  for (const auto& m : members_) out.insert(out.end(), m->local_shards().begin(), m->local_shards().end());
  return out;
}

std::vector<checkpointing::LocalShardState> ShardedTables::shard_states() const {
  std::vector<checkpointing::LocalShardState> out;
  for (const auto& m : members_) {
    std::vector<checkpointing::LocalShardState> states = checkpointing::local_shard_states(*m);
    out.insert(out.end(), states.begin(), states.end());
  }
  return out;
}

void ShardedTables::set_lr(double lr) {
  for (const auto& m : members_) m->set_lr(lr);
}

void ShardedTables::set_gradient_scale(std::optional<double> scale) {
  for (const auto& m : members_) m->set_gradient_scale(scale);
}

bool ShardedTables::last_backward_found_inf() const {
  bool found = false;
  for (const auto& m : members_) found = found || m->last_backward_found_inf();
  return found;
}

embedding::FusedEmbeddingBags::Timing ShardedTables::timing() const {
  embedding::FusedEmbeddingBags::Timing out;
  for (const auto& m : members_) {
    if (m->local_shards().empty()) continue;
    const embedding::FusedEmbeddingBags::Timing& t = m->local().timing();
    out.forward_seconds += t.forward_seconds;
    out.backward_seconds += t.backward_seconds;
    out.forward_calls += t.forward_calls;
    out.backward_calls += t.backward_calls;
  }
  return out;
}

}  // namespace tzrec::train
