#include "embedding/zch_embedding_bag_collection.h"

#include <cstdint>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "embedding/row_reset.h"
#include "sparse/jagged_tensor.h"

namespace tzrec::embedding {

ZchEmbeddingBagCollectionImpl::ZchEmbeddingBagCollectionImpl(std::vector<ZchTableConfig> tables,
                                                             std::vector<BagConfig> bags,
                                                             const std::string& tables_module)
    : tables_(std::move(tables)), bags_(std::move(bags)) {
  std::vector<TableConfig> plain_tables;
  for (const ZchTableConfig& t : tables_) {
    if (t.zch.zch_size != t.table.num_embeddings) {
      throw ConfigError(fmt::format("{}.zch_size: embedding table '{}' has {} rows but zch_size is {}",
                                    t.zch.field_path, t.table.name, t.table.num_embeddings, t.zch.zch_size));
    }
    plain_tables.push_back(t.table);
  }
  // The inner bags read the remapped ids under the bag keys (a feature feeding two zch tables is
  // remapped by each of them).
  std::vector<BagConfig> inner;
  for (const BagConfig& b : bags_) {
    BagConfig c = b;
    c.feature_name = b.key();
    c.output_key.clear();
    inner.push_back(std::move(c));
  }
  embedding_module_ = register_module("_embedding_module", EmbeddingBagCollection(std::move(plain_tables), std::move(inner), tables_module));

  std::unordered_map<std::string, size_t> index;
  for (size_t t = 0; t < tables_.size(); ++t) index.emplace(tables_[t].table.name, t);
  table_bags_.assign(tables_.size(), {});
  for (size_t b = 0; b < bags_.size(); ++b) table_bags_[index.at(bags_[b].table_name)].push_back(b);

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
  torch::NoGradGuard no_grad;
  std::vector<sparse::JaggedTensor> out(bags_.size());
  for (size_t t = 0; t < tables_.size(); ++t) {
    if (table_bags_[t].empty()) continue;
    std::vector<torch::Tensor> values;
    std::vector<int64_t> sizes;
    for (size_t b : table_bags_[t]) {
      const BagConfig& bag = bags_[b];
      if (!kjt.contains(bag.feature_name)) {
        throw DataError(fmt::format("sparse features of the batch have no feature '{}' (table '{}')",
                                    bag.feature_name, bag.table_name));
      }
      sparse::JaggedTensor jt = kjt[bag.feature_name];
      out[b].lengths = jt.lengths.to(torch::kInt64);
      if (bag.weighted && jt.weights.defined()) out[b].weights = jt.weights;
      values.push_back(jt.values.to(torch::kInt64));
      sizes.push_back(jt.values.size(0));
    }
    torch::Tensor rows = modules_[t]->forward(torch::cat(values), training);  // [sum of sizes]
    int64_t start = 0;
    for (size_t i = 0; i < table_bags_[t].size(); ++i) {
      out[table_bags_[t][i]].values = rows.slice(0, start, start + sizes[i]);
      start += sizes[i];
    }
  }
  std::vector<std::string> keys;
  for (const BagConfig& b : bags_) keys.push_back(b.key());
  return sparse::KeyedJaggedTensor::from_jagged(keys, out);
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
  if (bags_.empty()) return sparse::KeyedTensor();
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
