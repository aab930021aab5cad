#include "checkpoint/local_shard_state.h"

#include "checkpoint/sharded_checkpoint.h"

namespace tzrec::checkpointing {

std::vector<LocalShardState> local_shard_states(dist::ShardedEmbeddingBags& sharded) {
  std::vector<LocalShardState> out;
  if (sharded.local_shards().empty()) return out;
  const auto state = sharded.local().state_dict();
  for (const auto& ls : sharded.local_shards()) {
    const int64_t dim = sharded.plan().table(ls.table).embedding_dim;
    const std::string prefix = ls.local_name + ".";
    for (const auto& [key, value] : state) {
      if (key.rfind(prefix, 0) != 0) continue;
      out.push_back({&ls, shard_state_name(ls.table, key.substr(prefix.size()), value, ls.shard, dim), value});
    }
  }
  return out;
}

}  // namespace tzrec::checkpointing
