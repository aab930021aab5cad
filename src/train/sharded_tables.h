// The embedding tables of a distributed model: one ShardedEmbeddingBags per collection of its
// embedding group (the DEEP / WIDE groups' tables, then the sequence groups' per embedding dim,
// named "sequence.<table>" as in EmbeddingGroupImpl::tables()), planned as one job. Each
// collection exchanges its own ids and outputs; the session drives them as one.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "checkpoint/local_shard_state.h"
#include "dist/sharded_embedding_bags.h"
#include "dist/sharding_plan.h"
#include "embedding/fused_embedding_bags.h"

namespace tzrec::train {

class ShardedTables {
 public:
  // plan: every table of every member (the members' plans are its parts).
  ShardedTables(dist::ShardingPlan plan, std::vector<std::shared_ptr<dist::ShardedEmbeddingBags>> members);

  const dist::ShardingPlan& plan() const { return plan_; }
  // This rank's shards of every member, in member order (weights are live).
  std::vector<dist::ShardedEmbeddingBags::LocalShard> local_shards() const;
  // The sparse optimizer state of every local shard, in member order.
  std::vector<checkpointing::LocalShardState> shard_states() const;

  void set_lr(double lr);
  void set_gradient_scale(std::optional<double> scale);
  // Whether any member skipped its latest backward for a non-finite gradient (each member agrees
  // across ranks, so this is the same on every rank).
  bool last_backward_found_inf() const;
  // Lookups and updates of the local shards, summed over the members.
  embedding::FusedEmbeddingBags::Timing timing() const;

 private:
  dist::ShardingPlan plan_;
  std::vector<std::shared_ptr<dist::ShardedEmbeddingBags>> members_;
};

}  // namespace tzrec::train
