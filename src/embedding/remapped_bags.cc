#include "embedding/remapped_bags.h"

#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "sparse/jagged_tensor.h"

namespace tzrec::embedding {

RemappedBags::RemappedBags(const std::vector<std::string>& tables, std::vector<BagConfig> bags)
    : tables_(tables), bags_(std::move(bags)) {
  std::unordered_map<std::string, size_t> index;
  for (size_t t = 0; t < tables_.size(); ++t) index.emplace(tables_[t], t);
  table_bags_.assign(tables_.size(), {});
  for (size_t b = 0; b < bags_.size(); ++b) table_bags_[index.at(bags_[b].table_name)].push_back(b);
}

std::vector<BagConfig> RemappedBags::inner_bags() const {
  std::vector<BagConfig> inner;
  for (const BagConfig& b : bags_) {
    BagConfig c = b;
    c.feature_name = b.key();
    c.output_key.clear();
    inner.push_back(std::move(c));
  }
  return inner;
}

sparse::KeyedJaggedTensor RemappedBags::remap(const sparse::KeyedJaggedTensor& kjt,
                                              const RowsOfTables& rows_of_tables) const {
  torch::NoGradGuard no_grad;
  std::vector<sparse::JaggedTensor> out(bags_.size());
  std::vector<torch::Tensor> ids(tables_.size());
  std::vector<std::vector<int64_t>> sizes(tables_.size());
  for (size_t t = 0; t < tables_.size(); ++t) {
    if (table_bags_[t].empty()) continue;
    std::vector<torch::Tensor> values;
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
      sizes[t].push_back(jt.values.size(0));
    }
    ids[t] = torch::cat(values).contiguous();  // [sum of sizes]
  }
  const std::vector<torch::Tensor> rows = rows_of_tables(ids);
  for (size_t t = 0; t < tables_.size(); ++t) {
    int64_t start = 0;
    for (size_t i = 0; i < table_bags_[t].size(); ++i) {
      out[table_bags_[t][i]].values = rows[t].slice(0, start, start + sizes[t][i]);
      start += sizes[t][i];
    }
  }
  std::vector<std::string> keys;
  for (const BagConfig& b : bags_) keys.push_back(b.key());
  return sparse::KeyedJaggedTensor::from_jagged(keys, out);
}

}  // namespace tzrec::embedding
