#include "embedding/zch_embedding_bag_collection.h"

#include <cstdint>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "embedding/row_reset.h"

namespace tzrec::embedding {

ZchEmbeddingBagCollectionImpl::ZchEmbeddingBagCollectionImpl(std::vector<ZchTableConfig> tables,
                                                             std::vector<BagConfig> bags,
                                                             const std::string& tables_module)
    : tables_(std::move(tables)) {
  std::vector<std::string> names;
  for (const ZchTableConfig& t : tables_) names.push_back(t.table.name);
  bags_ = std::make_unique<RemappedBags>(names, std::move(bags));
  std::vector<TableConfig> plain_tables;
  for (const ZchTableConfig& t : tables_) {
    if (t.zch.zch_size != t.table.num_embeddings) {
      throw ConfigError(fmt::format("{}.zch_size: embedding table '{}' has {} rows but zch_size is {}",
                                    t.zch.field_path, t.table.name, t.table.num_embeddings, t.zch.zch_size));
    }
    plain_tables.push_back(t.table);
  }
  embedding_module_ = register_module(
      "_embedding_module", EmbeddingBagCollection(std::move(plain_tables), bags_->inner_bags(), tables_module));

  for (const ZchTableConfig& t : tables_) modules_.push_back(std::make_shared<ZchModule>(t.zch));
  mc_collection_ = std::make_shared<torch::nn::Module>();
  register_module_buffers();
  register_module("_managed_collision_collection", mc_collection_);
}

void ZchEmbeddingBagCollectionImpl::register_module_buffers() {
  // "_managed_collision_collection._managed_collision_modules.<table>.<buffer>" (TorchRec).
  std::vector<std::pair<std::string, std::shared_ptr<torch::nn::Module>>> holders;
  for (size_t t = 0; t < tables_.size(); ++t) {
    auto holder = std::make_shared<torch::nn::Module>();
    for (const auto& [name, tensor] : modules_[t]->state()) holder->register_buffer(name, tensor);
    holders.emplace_back(tables_[t].table.name, holder);
  }
  torch::nn::ModuleDict dict(holders);
  if (mc_collection_->named_children().contains("_managed_collision_modules")) {
    mc_collection_->replace_module("_managed_collision_modules", dict);
  } else {
    mc_collection_->register_module("_managed_collision_modules", dict);
  }
}

void ZchEmbeddingBagCollectionImpl::attach_sharded(std::shared_ptr<IdExchange> exchange,
                                                   const std::vector<std::vector<int64_t>>& boundaries) {
  TORCH_CHECK(boundaries.size() == tables_.size(), "ZchEmbeddingBagCollection::attach_sharded: one block list per table");
  const int rank = exchange->rank();
  const int world = exchange->world_size();
  for (size_t t = 0; t < tables_.size(); ++t) {
    const std::vector<int64_t>& b = boundaries[t];
    TORCH_CHECK(static_cast<int>(b.size()) == world + 1, "ZchEmbeddingBagCollection::attach_sharded: W + 1 boundaries");
    check_zch_row_blocks(b, tables_[t].zch.field_path);
    ZchOptions options = tables_[t].zch;
    options.output_global_offset = b[rank];
    options.zch_size = b[rank + 1] - b[rank];
    options.output_segments = b;
    modules_[t] = std::make_shared<ZchModule>(options);
  }
  register_module_buffers();
  history_sized_.assign(tables_.size(), false);
  exchange_ = std::move(exchange);
}

std::vector<RowBlockBuffer> ZchEmbeddingBagCollectionImpl::place_buffers() const {
  std::vector<RowBlockBuffer> out;
  for (size_t t = 0; t < tables_.size(); ++t) {
    const auto names = place_buffer_names(t);
    for (const auto& [name, tensor] : modules_[t]->state()) {
      if (!is_zch_place_buffer(name)) continue;
      out.push_back({names.at(name), tensor, tables_[t].table.num_embeddings,
                     modules_[t]->options().output_global_offset});
    }
  }
  return out;
}

std::map<std::string, std::string> ZchEmbeddingBagCollectionImpl::place_buffer_names(size_t t) const {
  std::map<std::string, std::string> out;
  for (const auto& [name, tensor] : modules_.at(t)->state()) {
    if (is_zch_place_buffer(name)) {
      out.emplace(name, fmt::format("_managed_collision_collection._managed_collision_modules.{}.{}",
                                    tables_[t].table.name, name));
    }
  }
  return out;
}

ZchShardState ZchEmbeddingBagCollectionImpl::load_sharded_state(size_t t, const std::map<std::string, torch::Tensor>& saved) {
  ZchModule& module = *modules_.at(t);
  const ZchOptions& o = module.options();
  const int rank = exchange_ ? exchange_->rank() : 0;
  const int world = exchange_ ? exchange_->world_size() : 1;
  std::vector<std::string> names;
  std::map<std::string, torch::Tensor> own;
  for (const auto& [name, tensor] : module.state()) {
    if (is_zch_place_buffer(name)) names.push_back(name);
    own.emplace(name, tensor.clone());
  }
  const std::string where = fmt::format("zero-collision hash of table '{}'", tables_[t].table.name);
  ZchShardState state = zch_shard_state(saved, names, o.output_global_offset, o.zch_size, rank, world, where);
  for (const auto& [name, tensor] : state.places) own[name] = tensor;
  own["_output_segments_tensor"] = module.initial_output_segments();
  module.load_state(own, where);
  return state;
}

ZchModule& ZchEmbeddingBagCollectionImpl::zch_module(const std::string& table) {
  for (size_t t = 0; t < tables_.size(); ++t) {
    if (tables_[t].table.name == table) return *modules_[t];
  }
  throw ConfigError(fmt::format("no zero-collision hashed embedding table '{}'", table));
}

sparse::KeyedJaggedTensor ZchEmbeddingBagCollectionImpl::remap(const sparse::KeyedJaggedTensor& kjt,
                                                              bool training) {
  return bags_->remap(kjt, [&](const std::vector<torch::Tensor>& ids) { return rows_of(ids, training); });
}

std::vector<torch::Tensor> ZchEmbeddingBagCollectionImpl::rows_of(const std::vector<torch::Tensor>& ids,
                                                                  bool training) {
  std::vector<torch::Tensor> out(ids.size());
  if (!exchange_) {
    for (size_t t = 0; t < ids.size(); ++t) {
      if (ids[t].defined()) out[t] = modules_[t]->forward(ids[t], training);
    }
    return out;
  }
  const int world = exchange_->world_size();
  for (size_t t = 0; t < ids.size(); ++t) {
    if (!training || !ids[t].defined() || history_sized_[t]) continue;
    // The history holds what the first batch of all ranks together would (its routed share varies
    // from step to step: a run resumed at another step would size it otherwise).
    const torch::Tensor mine = torch::full({world}, ids[t].numel(), torch::kInt64);
    const torch::Tensor all = exchange_->exchange(
        mine, std::vector<int64_t>(world, 1), nullptr,
        fmt::format("zero-collision hash batch size of table '{}'", tables_[t].table.name), nullptr);
    modules_[t]->reserve_history(all.sum().item<int64_t>());
    history_sized_[t] = true;
  }
  return route_to_owners(
      *exchange_, ids, [&](size_t t, const torch::Tensor& owned) { return modules_[t]->forward(owned, training); },
      "zero-collision hashed tables");
}

void ZchEmbeddingBagCollectionImpl::reset_rows(const std::string& table, const torch::Tensor& rows_in) {
  if (rows_in.numel() == 0) return;
  size_t t = 0;
  while (t < tables_.size() && tables_[t].table.name != table) ++t;
  if (t == tables_.size()) throw ConfigError(fmt::format("no zero-collision hashed embedding table '{}'", table));
  // Drawn from a stream of their own: resumed runs re-draw the same rows (row_reset.h).
  const TableConfig& config = tables_[t].table;
  reset_table_rows(embedding_module_, t, rows_in,
                   block_step_seed(table, modules_[t]->options().output_global_offset, modules_[t]->current_iter()),
                   [&config](torch::Tensor& fresh) { init_table_weight(config, fresh); });
}

std::map<std::string, torch::Tensor> ZchEmbeddingBagCollectionImpl::evict_and_reset() {
  std::map<std::string, torch::Tensor> out;
  for (size_t t = 0; t < tables_.size(); ++t) {
    std::optional<torch::Tensor> evicted = modules_[t]->evict();
    if (!evicted) continue;
    reset_rows(tables_[t].table.name, *evicted);
    out.emplace(tables_[t].table.name, *evicted);
  }
  return out;
}

sparse::KeyedTensor ZchEmbeddingBagCollectionImpl::forward(const sparse::KeyedJaggedTensor& kjt) {
  if (bags_->bags().empty()) return sparse::KeyedTensor();
  if (embedding_module_->tables_deferred() && !exchange_) {
    throw NotSupportedError(fmt::format("{} with more than one rank (the collection is not attached to its sharded tables)",
                                        tables_.front().zch.field_path));
  }
  sparse::KeyedJaggedTensor remapped = remap(kjt, is_training());
  evict_and_reset();
  return embedding_module_->forward(remapped);
}

void ZchEmbeddingBagCollectionImpl::reload_zch_state() {
  for (size_t t = 0; t < tables_.size(); ++t) {
    std::map<std::string, torch::Tensor> own;
    for (const auto& [name, tensor] : modules_[t]->state()) own.emplace(name, tensor.clone());
    modules_[t]->load_state(own, fmt::format("zero-collision hash of table '{}'", tables_[t].table.name));
  }
}

void ZchEmbeddingBagCollectionImpl::track_touched_ids() {
  for (auto& m : modules_) m->track_touched_ids();
}

std::pair<torch::Tensor, torch::Tensor> ZchEmbeddingBagCollectionImpl::take_touched(size_t t) {
  torch::Tensor ids = modules_.at(t)->take_touched_ids();
  // remap(): the slot of a held id, the sentinel's (fallback) slot for any other; slots are row
  // numbers of the whole table, in this rank's block when sharded.
  torch::Tensor rows = modules_[t]->remap(ids);
  return {ids, embedding_module_->read_rows(t, rows)};
}

}  // namespace tzrec::embedding
