#include "train/remapped_shard_checkpoint.h"

#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"
#include "embedding/dynamic_checkpoint_layout.h"

namespace tzrec::train {
namespace {

// Module paths below the model, by module.
std::map<const torch::nn::Module*, std::string> module_paths(torch::nn::Module& model) {
  std::map<const torch::nn::Module*, std::string> paths;
  for (const auto& item : model.named_modules()) paths.emplace(item.value().get(), item.key());
  return paths;
}

// A remapping collection of the model: its module path and the prefix of its tables.
template <typename Collection>
struct CollectionAt {
  std::string path;
  std::string table_prefix;
  Collection collection;
};

template <typename Collection>
std::vector<CollectionAt<Collection>> located(const std::map<const torch::nn::Module*, std::string>& paths,
                                              const std::vector<std::pair<std::string, Collection>>& collections) {
  std::vector<CollectionAt<Collection>> out;
  for (const auto& [prefix, c] : collections) {
    auto it = paths.find(c.get());
    TORCH_CHECK(it != paths.end(), "remapping collection is not a submodule of the model");
    out.push_back({it->second, prefix, c});
  }
  return out;
}

// Every row-sharded buffer of the model with its name below the model.
std::vector<embedding::RowBlockBuffer> state_buffers(torch::nn::Module& model, const embedding::EmbeddingGroupSet& group) {
  std::vector<embedding::RowBlockBuffer> out;
  const auto zch = group.zch_collections();
  const auto dynamic = group.dynamic_collections();
  if (zch.empty() && dynamic.empty()) return out;
  const auto paths = module_paths(model);
  for (auto& c : located(paths, zch)) {
    for (auto b : c.collection->place_buffers()) {
      b.name = c.path + "." + b.name;
      out.push_back(std::move(b));
    }
  }
  for (auto& c : located(paths, dynamic)) {
    for (auto b : c.collection->state_buffers()) {
      b.name = c.path + "." + b.name;
      out.push_back(std::move(b));
    }
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

// Moves rows `from` (of the checkpoint's tensors) → `to` (of this rank's shard) of `table`: the
// weight, and the sparse optimizer state when asked.
void move_rows(const embedding::EmbeddingGroupSet& group, const ShardedTables& sharded,
               const checkpointing::CheckpointTensorIndex& index, const std::string& table, const torch::Tensor& from_in,
               const torch::Tensor& to_in, bool move_optimizer_state) {
  if (from_in.numel() == 0) return;
  torch::NoGradGuard no_grad;
  const torch::Tensor order = torch::argsort(from_in);
  const torch::Tensor from = from_in.index({order}).contiguous();
  const torch::Tensor to = to_in.index({order});
  for (const auto& ls : sharded.local_shards()) {
    if (ls.table != table) continue;
    torch::Tensor weight = ls.weight;
    const std::string name = checkpointing::table_weight_name(group, table);
    weight.index_copy_(0, to - ls.shard.row_offset, read_rows(index, name, from, ls.shard).to(weight.scalar_type()));
  }
  if (!move_optimizer_state) return;
  for (const checkpointing::LocalShardState& s : sharded.shard_states()) {
    if (s.shard->table != table || s.value.dim() == 0) continue;
    if (!index.contains(s.stored_name)) {
      throw CheckpointError(fmt::format("checkpoint has no sparse optimizer state '{}' (trained with another sparse "
                                        "optimizer?); pass --ignore_restore_optimizer to start it afresh",
                                        s.stored_name));
    }
    torch::Tensor value = s.value;
    value.index_copy_(0, to - s.shard->shard.row_offset,
                      read_rows(index, s.stored_name, from, s.shard->shard).to(value.scalar_type()));
  }
}

// The whole saved buffers `names` (buffer → name below the collection) of one table; nullopt
// (after the error or warning `required` asks for) when the checkpoint lacks one.
std::optional<std::map<std::string, torch::Tensor>> read_saved(const checkpointing::CheckpointTensorIndex& index,
                                                               const std::string& path,
                                                               const std::map<std::string, std::string>& names,
                                                               const std::string& ckpt_dir, const std::string& table,
                                                               bool required) {
  std::map<std::string, torch::Tensor> saved;
  for (const auto& [buffer, name] : names) {
    const std::string full = path + "." + name;
    if (!index.contains(full)) {
      if (required) {
        throw CheckpointError(fmt::format("checkpoint {} has no state '{}' of table '{}' (trained with another "
                                          "config?)",
                                          ckpt_dir, full, table));
      }
      log::warning("checkpoint {} has no state '{}': table '{}' keeps its fresh state", ckpt_dir, full, table);
      return std::nullopt;
    }
    saved.emplace(buffer, index.read_whole(full));
  }
  return saved;
}

}  // namespace

DynamicRowsInUse dynamic_rows_in_use(torch::nn::Module& model, const embedding::EmbeddingGroupSet& group,
                                     dist::ProcessGroup* pg) {
  DynamicRowsInUse out;
  const auto dynamic = group.dynamic_collections();
  if (dynamic.empty()) return out;
  const int world = pg != nullptr ? pg->world_size() : 1;
  out.rank = pg != nullptr ? pg->rank() : 0;
  std::vector<int64_t> mine, capacities;
  std::vector<std::string> order;
  for (auto& c : located(module_paths(model), dynamic)) {
    const auto& tables = c.collection->dynamic_table_configs();
    for (size_t t = 0; t < tables.size(); ++t) {
      DynamicRowsInUse::Table entry;
      for (const auto& names : {c.collection->state_buffer_names(t), c.collection->layout_tensor_names(t)}) {
        for (const auto& [tensor, name] : names) entry.names.emplace(tensor, c.path + "." + name);
      }
      mine.push_back(c.collection->rows_in_use(t));
      capacities.push_back(c.collection->dynamic_table(tables[t].table.name).max_capacity());
      order.push_back(c.table_prefix + tables[t].table.name);
      out.tables.emplace(order.back(), std::move(entry));
    }
  }
  // Every rank's rows in use, table by table.
  std::vector<std::vector<int64_t>> used(order.size());
  if (world == 1) {
    for (size_t i = 0; i < order.size(); ++i) used[i] = {mine[i]};
  } else {
    const std::vector<torch::Tensor> all =
        pg->all_gather(torch::tensor(mine, torch::kInt64), "rows in use of the dynamic tables");
    for (const torch::Tensor& rank_rows : all) {
      const torch::Tensor r = rank_rows.to(torch::kInt64).contiguous();
      for (size_t i = 0; i < order.size(); ++i) used[i].push_back(r.data_ptr<int64_t>()[i]);
    }
  }
  for (size_t i = 0; i < order.size(); ++i) {
    out.tables.at(order[i]).layout = embedding::dynamic_saved_layout(std::move(used[i]), capacities[i]);
  }
  return out;
}

void add_dynamic_layout_tensors(const DynamicRowsInUse& rows, std::map<std::string, torch::Tensor>& model_tensors) {
  for (const auto& [table, t] : rows.tables) {
    model_tensors[t.names.at("rows_in_use")] = torch::tensor(t.layout.rows_in_use, torch::kInt64);
    model_tensors[t.names.at("capacity")] = torch::tensor({t.layout.capacity}, torch::kInt64);
  }
}

void cut_dynamic_tables_to_rows_in_use(const embedding::EmbeddingGroupSet& group, const DynamicRowsInUse& rows,
                                       std::map<std::string, torch::Tensor>& model_tensors,
                                       std::map<std::string, torch::Tensor>& optimizer) {
  for (const auto& [table, t] : rows.tables) {
    TORCH_CHECK(t.layout.world == 1, "cut_dynamic_tables_to_rows_in_use is for one process");
    const int64_t used = t.layout.rows_in_use.front();
    auto cut_block = [&](std::map<std::string, torch::Tensor>& tensors, const std::string& name) {
      auto it = tensors.find(name);
      if (it != tensors.end()) it->second = embedding::rows_in_use_block(it->second, used, t.layout.capacity);
    };
    cut_block(model_tensors, checkpointing::table_weight_name(group, table));
    for (const char* slot : {"momentum1", "momentum2"}) cut_block(optimizer, fmt::format("sparse.{}.{}", table, slot));
    for (const char* buffer : {"row_keys", "row_scores", "row_live"}) {
      auto it = model_tensors.find(t.names.at(buffer));
      if (it != model_tensors.end()) it->second = it->second.narrow(0, 0, used);
    }
  }
}

std::set<std::string> remapped_state_buffer_names(torch::nn::Module& model, const embedding::EmbeddingGroupSet& group) {
  std::set<std::string> out;
  for (const auto& b : state_buffers(model, group)) out.insert(b.name);
  return out;
}

std::vector<checkpointing::TensorBlock> remapped_state_blocks(torch::nn::Module& model,
                                                               const embedding::EmbeddingGroupSet& group,
                                                               const DynamicRowsInUse* rows) {
  for (auto& [prefix, d] : group.dynamic_collections()) d->sync_state();
  // Buffers cut to the rows in use: name → (its table's entry).
  std::map<std::string, const DynamicRowsInUse::Table*> cut;
  if (rows != nullptr) {
    for (const auto& [table, t] : rows->tables) {
      for (const char* buffer : {"row_keys", "row_scores", "row_live"}) cut.emplace(t.names.at(buffer), &t);
    }
  }
  std::vector<checkpointing::TensorBlock> out;
  for (const auto& b : state_buffers(model, group)) {
    auto it = cut.find(b.name);
    if (it == cut.end()) {
      out.push_back({b.name, {b.total_rows}, b.row_offset, 0, b.value});
    } else {
      const auto r = static_cast<size_t>(rows->rank);
      const embedding::DynamicSavedLayout& layout = it->second->layout;
      out.push_back({b.name, {layout.state_rows}, layout.state_offsets.at(r), 0,
                     b.value.narrow(0, 0, layout.rows_in_use.at(r))});
    }
  }
  return out;
}

std::set<std::string> dynamic_table_names(const embedding::EmbeddingGroupSet& group) {
  std::set<std::string> out;
  for (const auto& [prefix, d] : group.dynamic_collections()) {
    for (const auto& t : d->dynamic_table_configs()) out.insert(prefix + t.table.name);
  }
  return out;
}

void restore_remapped_shards(torch::nn::Module& model, const embedding::EmbeddingGroupSet& group,
                             const ShardedTables& sharded, const std::string& ckpt_dir,
                             const checkpointing::CheckpointTensorIndex& index, bool move_optimizer_state,
                             bool required) {
  const auto zch = group.zch_collections();
  const auto dynamic = group.dynamic_collections();
  if (zch.empty() && dynamic.empty()) return;
  const auto paths = module_paths(model);
  for (auto& c : located(paths, zch)) {
    const auto& tables = c.collection->zch_table_configs();
    for (size_t t = 0; t < tables.size(); ++t) {
      const std::string& table = tables[t].table.name;
      const auto saved = read_saved(index, c.path, c.collection->place_buffer_names(t), ckpt_dir, table, required);
      if (!saved) continue;
      const embedding::ZchShardState state = c.collection->load_sharded_state(t, *saved);
      if (state.dropped > 0) {
        log::warning("zero-collision hashed table '{}': {} id(s) of the checkpoint do not fit this rank's {} rows "
                     "and were dropped (kept: the most frequent, then the most recent)",
                     table, state.dropped, c.collection->zch_module(table).output_size());
      }
      move_rows(group, sharded, index, c.table_prefix + table, state.moved_from, state.moved_to,
                move_optimizer_state);
    }
  }
  for (auto& c : located(paths, dynamic)) {
    const auto& tables = c.collection->dynamic_table_configs();
    for (size_t t = 0; t < tables.size(); ++t) {
      const std::string& table = tables[t].table.name;
      auto saved = read_saved(index, c.path, c.collection->state_buffer_names(t), ckpt_dir, table, required);
      if (!saved) continue;
      // The layout of checkpoints holding the rows in use (dynamic_checkpoint_layout.h).
      for (const auto& [tensor, name] : c.collection->layout_tensor_names(t)) {
        if (index.contains(c.path + "." + name)) saved->emplace(tensor, index.read_whole(c.path + "." + name));
      }
      const std::string weight = checkpointing::table_weight_name(group, c.table_prefix + table);
      if (!index.contains(weight)) {
        throw CheckpointError(fmt::format("checkpoint {} has no embedding table weight '{}'", ckpt_dir, weight));
      }
      const auto restored = c.collection->load_sharded_state(t, *saved, index.shape(weight).at(0));
      if (restored.dropped > 0 || restored.counter_dropped > 0) {
        log::warning("dynamic embedding table '{}': {} id(s) and {} admission counter entries of the checkpoint do "
                     "not fit this rank's table and were dropped (kept: the highest scores)",
                     table, restored.dropped, restored.counter_dropped);
      }
      move_rows(group, sharded, index, c.table_prefix + table, restored.moved_from, restored.moved_to,
                move_optimizer_state);
    }
  }
}

void relayout_dynamic_checkpoint(torch::nn::Module& model, const embedding::EmbeddingGroupSet& group,
                                 checkpointing::CheckpointData& checkpoint,
                                 const std::map<std::string, torch::Tensor>& sparse_state) {
  const auto dynamic = group.dynamic_collections();
  if (dynamic.empty()) return;
  torch::NoGradGuard no_grad;
  std::map<std::string, torch::Tensor> parameters, buffers;
  for (const auto& item : model.named_parameters(/*recurse=*/true)) parameters.emplace(item.key(), item.value());
  for (const auto& item : model.named_buffers(/*recurse=*/true)) buffers.emplace(item.key(), item.value());
  for (auto& c : located(module_paths(model), dynamic)) {
    const auto& tables = c.collection->dynamic_table_configs();
    for (size_t t = 0; t < tables.size(); ++t) {
      const std::string table = c.table_prefix + tables[t].table.name;
      const std::string weight_name = checkpointing::table_weight_name(group, table);
      auto saved_weight = checkpoint.model.find(weight_name);
      if (saved_weight == checkpoint.model.end()) continue;
      std::map<std::string, torch::Tensor> saved;
      const auto names = c.collection->state_buffer_names(t);
      for (const auto& [buffer, name] : names) {
        auto it = checkpoint.model.find(c.path + "." + name);
        if (it == checkpoint.model.end()) {
          throw CheckpointError(fmt::format("checkpoint {} has no state '{}.{}' of table '{}'", checkpoint.dir, c.path,
                                            name, table));
        }
        saved.emplace(buffer, it->second);
      }
      // The layout tensors are read here and are no tensors of the model.
      for (const auto& [tensor, name] : c.collection->layout_tensor_names(t)) {
        auto it = checkpoint.model.find(c.path + "." + name);
        if (it == checkpoint.model.end()) continue;
        saved.emplace(tensor, it->second);
        checkpoint.model.erase(it);
      }
      const auto restored = c.collection->load_sharded_state(t, saved, saved_weight->second.size(0));
      if (restored.dropped > 0 || restored.counter_dropped > 0) {
        log::warning("dynamic embedding table '{}': {} id(s) and {} admission counter entries of the checkpoint do "
                     "not fit the table and were dropped (kept: the highest scores)",
                     table, restored.dropped, restored.counter_dropped);
      }
      // The live rows are moved into the model's own tensors, which then stand for the
      // checkpoint's (restoring a tensor from itself writes nothing: rows no id holds stay
      // unwritten, demand_paged_tensor.h).
      auto move_into = [&](torch::Tensor now, const torch::Tensor& stored) {
        now.index_copy_(0, restored.moved_to, stored.index_select(0, restored.moved_from).to(now.scalar_type()));
        return now;
      };
      saved_weight->second = move_into(parameters.at(weight_name).detach(), saved_weight->second);
      for (const auto& [buffer, name] : names) {
        const std::string full = c.path + "." + name;
        checkpoint.model[full] = buffers.at(full);
      }
      for (const char* slot : {"momentum1", "momentum2"}) {
        const std::string key = fmt::format("{}.{}", table, slot);
        auto stored = checkpoint.optimizer.find("sparse." + key);
        auto now = sparse_state.find(key);
        if (stored == checkpoint.optimizer.end() || now == sparse_state.end()) continue;
        stored->second = move_into(now->second, stored->second);
      }
    }
  }
}

std::vector<std::pair<std::string, torch::Tensor>> live_rows_of_dynamic_tables(
    torch::nn::Module& model, const embedding::EmbeddingGroupSet& group,
    const std::vector<std::pair<std::string, torch::Tensor>>& tensors) {
  std::vector<std::pair<std::string, torch::Tensor>> out = tensors;
  const auto dynamic = group.dynamic_collections();
  if (dynamic.empty()) return out;
  std::map<std::string, size_t> position;
  for (size_t i = 0; i < out.size(); ++i) position.emplace(out[i].first, i);
  auto find = [&](const std::string& name) -> torch::Tensor* {
    auto it = position.find(name);
    return it == position.end() ? nullptr : &out[it->second].second;
  };
  torch::NoGradGuard no_grad;
  for (auto& c : located(module_paths(model), dynamic)) {
    const auto& tables = c.collection->dynamic_table_configs();
    for (size_t t = 0; t < tables.size(); ++t) {
      const std::string table = c.table_prefix + tables[t].table.name;
      torch::Tensor* weight = find(checkpointing::table_weight_name(group, table));
      const auto names = c.collection->state_buffer_names(t);
      torch::Tensor* keys = find(c.path + "." + names.at("row_keys"));
      torch::Tensor* scores = find(c.path + "." + names.at("row_scores"));
      torch::Tensor* live = find(c.path + "." + names.at("row_live"));
      if (weight == nullptr || keys == nullptr || scores == nullptr || live == nullptr) continue;
      const int64_t rows = live->size(0);
      TORCH_CHECK(weight->size(0) == rows + 2, "dynamic table ", table, ": weight of ", weight->size(0),
                  " rows for a state of ", rows, " rows (a one-process layout has 2 more)");
      const torch::Tensor idx = torch::nonzero(*live).flatten();
      *weight = torch::cat({weight->index_select(0, idx), weight->narrow(0, rows, 2)});
      *keys = keys->index_select(0, idx);
      *scores = scores->index_select(0, idx);
      *live = torch::ones({idx.numel()}, live->options());
    }
  }
  return out;
}

}  // namespace tzrec::train
