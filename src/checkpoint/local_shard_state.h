// The sparse optimizer state of this rank's embedding shards, paired with its names in
// checkpoints (train/sharded_checkpoint.h), for saving, restoring and fine-tuning alike.
#pragma once

#include <string>
#include <vector>

#include <torch/torch.h>

#include "dist/sharded_embedding_bags.h"

namespace tzrec::checkpointing {

struct LocalShardState {
  const dist::ShardedEmbeddingBags::LocalShard* shard;  // owner
  std::string stored_name;                             // shard_state_name(...) of the tensor
  torch::Tensor value;                                 // live state tensor of the local operator
};

// Every optimizer state tensor of `sharded`'s local shards (none when it has no shards or no
// optimizer), in shard order.
std::vector<LocalShardState> local_shard_states(dist::ShardedEmbeddingBags& sharded);

}  // namespace tzrec::checkpointing
