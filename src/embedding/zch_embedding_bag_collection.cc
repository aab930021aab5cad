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

  // "_managed_collision_collection._managed_collision_modules.<table>.<buffer>" (TorchRec).
  std::vector<std::pair<std::string, std::shared_ptr<torch::nn::Module>>> holders;
  for (const ZchTableConfig& t : tables_) {
    auto module = std::make_shared<ZchModule>(t.zch);
    auto holder = std::make_shared<torch::nn::Module>();
    for (const auto& [name, tensor] : module->state()) holder->register_buffer(name, tensor);
    modules_.push_back(std::move(module));
    holders.emplace_back(t.table.name, holder);
  }
  mc_collection_ = std::make_shared<torch::nn::Module>();
  mc_collection_->register_module("_managed_collision_modules", torch::nn::ModuleDict(holders));
  register_module("_managed_collision_collection", mc_collection_);
}

ZchModule& ZchEmbeddingBagCollectionImpl::zch_module(const std::string& table) {
  for (size_t t = 0; t < tables_.size(); ++t) {
    if (tables_[t].table.name == table) return *modules_[t];
  }
  throw ConfigError(fmt::format("no zero-collision hashed embedding table '{}'", table));
}

sparse::KeyedJaggedTensor ZchEmbeddingBagCollectionImpl::remap(const sparse::KeyedJaggedTensor& kjt,
                                                              bool training) {
  return bags_->remap(kjt, [&](size_t t, const torch::Tensor& ids) { return modules_[t]->forward(ids, training); });
}

void ZchEmbeddingBagCollectionImpl::reset_rows(const std::string& table, const torch::Tensor& rows_in) {
  if (rows_in.numel() == 0) return;
  size_t t = 0;
  while (t < tables_.size() && tables_[t].table.name != table) ++t;
  if (t == tables_.size()) throw ConfigError(fmt::format("no zero-collision hashed embedding table '{}'", table));
  // Drawn from a stream of their own: resumed runs re-draw the same rows (row_reset.h).
  const TableConfig& config = tables_[t].table;
  reset_table_rows(embedding_module_, t, rows_in, table_step_seed(table, modules_[t]->current_iter()),
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
  if (embedding_module_->tables_deferred()) {
    throw NotSupportedError(fmt::format("{} with more than one rank (zero-collision hashed tables are not sharded)",
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

}  // namespace tzrec::embedding
