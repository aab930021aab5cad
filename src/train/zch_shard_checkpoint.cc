#include "train/zch_shard_checkpoint.h"

#include <map>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"

namespace tzrec::train {
namespace {

struct ZchCollectionAt {
  std::string path;          // module path below the model
  std::string table_prefix;  // prefix of its tables in EmbeddingGroupSet::tables()
  embedding::ZchEmbeddingBagCollection mc;
};

std::vector<ZchCollectionAt> zch_collections_at(torch::nn::Module& model, const embedding::EmbeddingGroupSet& group) {
  const auto zch = group.zch_collections();
  if (zch.empty()) return {};
  std::map<const torch::nn::Module*, std::string> paths;
  for (const auto& item : model.named_modules()) paths.emplace(item.value().get(), item.key());
  std::vector<ZchCollectionAt> out;
  for (const auto& [prefix, mc] : zch) {
    auto it = paths.find(mc.get());
    TORCH_CHECK(it != paths.end(), "zero-collision hashed collection is not a submodule of the model");
    out.push_back({it->second, prefix, mc});
  }
  return out;
}

// Rows `rows` (ascending runs read together) of `name` in the checkpoint, columns as `shard`.
torch::Tensor read_rows(const checkpointing::CheckpointTensorIndex& index, const std::string& name,
                        const torch::Tensor& rows, const dist::Shard& shard) {
  const int64_t n = rows.numel();
  const int64_t* r = rows.data_ptr<int64_t>();
  std::vector<torch::Tensor> parts;
  for (int64_t i = 0; i < n;) {
    int64_t j = i + 1;
    while (j < n && r[j] == r[j - 1] + 1) ++j;
    dist::Shard run = shard;
    run.row_offset = r[i];
    run.rows = j - i;
    parts.push_back(checkpointing::read_shard_block(index, name, run));
    i = j;
  }
  return torch::cat(parts);
}

// Moves rows moved_from → moved_to of `table` (values read from the checkpoint) in this rank's
// shard: the weight, and the sparse optimizer state when asked.
void move_rows(const embedding::EmbeddingGroupSet& group, const ShardedTables& sharded,
               const checkpointing::CheckpointTensorIndex& index, const std::string& table,
               const embedding::ZchShardState& state, bool move_optimizer_state) {
  if (state.moved_from.numel() == 0) return;
  torch::NoGradGuard no_grad;
  const torch::Tensor order = torch::argsort(state.moved_from);
  const torch::Tensor from = state.moved_from.index({order}).contiguous();
  const torch::Tensor to = state.moved_to.index({order});
  for (const auto& ls : sharded.local_shards()) {
    if (ls.table != table) continue;
    torch::Tensor weight = ls.weight;
    const std::string name = checkpointing::table_weight_name(group, table);
    weight.index_copy_(0, to - ls.shard.row_offset, read_rows(index, name, from, ls.shard).to(weight.scalar_type()));
  }
  if (!move_optimizer_state) return;
  for (const checkpointing::LocalShardState& s : sharded.shard_states()) {
    if (s.shard->table != table || s.value.dim() == 0) continue;
    if (!index.contains(s.stored_name)) continue;  // restore_shards reported it already
    torch::Tensor value = s.value;
    value.index_copy_(0, to - s.shard->shard.row_offset,
                      read_rows(index, s.stored_name, from, s.shard->shard).to(value.scalar_type()));
  }
}

}  // namespace

std::set<std::string> zch_place_buffer_names(torch::nn::Module& model, const embedding::EmbeddingGroupSet& group) {
  std::set<std::string> out;
  for (const ZchCollectionAt& c : zch_collections_at(model, group)) {
    for (const auto& b : c.mc->place_buffers()) out.insert(c.path + "." + b.name);
  }
  return out;
}

std::vector<checkpointing::TensorBlock> zch_place_blocks(torch::nn::Module& model,
                                                          const embedding::EmbeddingGroupSet& group) {
  std::vector<checkpointing::TensorBlock> out;
  for (const ZchCollectionAt& c : zch_collections_at(model, group)) {
    for (const auto& b : c.mc->place_buffers()) {
      out.push_back({c.path + "." + b.name, {b.total_rows}, b.row_offset, 0, b.value});
    }
  }
  return out;
}

void restore_zch_shards(torch::nn::Module& model, const embedding::EmbeddingGroupSet& group,
                        const ShardedTables& sharded, const std::string& ckpt_dir,
                        const checkpointing::CheckpointTensorIndex& index, bool move_optimizer_state, bool required) {
  for (ZchCollectionAt& c : zch_collections_at(model, group)) {
    const auto& tables = c.mc->zch_table_configs();
    for (size_t t = 0; t < tables.size(); ++t) {
      std::map<std::string, torch::Tensor> saved;
      std::string missing;
      for (const auto& [buffer, name] : c.mc->place_buffer_names(t)) {
        const std::string full = c.path + "." + name;
        if (!index.contains(full)) {
          missing = full;
          break;
        }
        saved.emplace(buffer, index.read_whole(full));
      }
      if (!missing.empty()) {
        if (required) {
          throw CheckpointError(fmt::format("checkpoint {} has no zero-collision hash state '{}' (trained without "
                                            "zch on this table?)",
                                            ckpt_dir, missing));
        }
        log::warning("checkpoint {} has no zero-collision hash state '{}': table '{}' keeps its fresh state",
                     ckpt_dir, missing, tables[t].table.name);
        continue;
      }
      const embedding::ZchShardState state = c.mc->load_sharded_state(t, saved);
      if (state.dropped > 0) {
        log::warning("zero-collision hashed table '{}': {} id(s) of the checkpoint do not fit this rank's {} rows "
                     "and were dropped (kept: the most frequent, then the most recent)",
                     tables[t].table.name, state.dropped, c.mc->zch_module(tables[t].table.name).output_size());
      }
      move_rows(group, sharded, index, c.table_prefix + tables[t].table.name, state, move_optimizer_state);
    }
  }
}

}  // namespace tzrec::train
