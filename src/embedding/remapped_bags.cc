#include "embedding/remapped_bags.h"

#include <algorithm>
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
  all_weighted_ = !bags_.empty();
  for (const BagConfig& bag : bags_) {
    features_.push_back(bag.feature_name);
    keys_.push_back(bag.key());
    all_weighted_ = all_weighted_ && bag.weighted;
  }
  bool consecutive = true;
  for (size_t t = 0; t < tables_.size(); ++t) {
    const std::vector<size_t>& own = table_bags_[t];
    if (own.empty()) continue;
    consecutive = consecutive && own.back() - own.front() + 1 == own.size();
    consecutive_tables_.push_back(t);
  }
  std::sort(consecutive_tables_.begin(), consecutive_tables_.end(),
            [&](size_t a, size_t b) { return table_bags_[a].front() < table_bags_[b].front(); });
  if (!consecutive) consecutive_tables_.clear();
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

std::optional<sparse::KeyedJaggedTensor> RemappedBags::remap_aligned(const sparse::KeyedJaggedTensor& kjt,
                                                                     const RowsOfTables& rows_of_tables) const {
  const bool weighted = kjt.weights().defined();
  if (consecutive_tables_.empty() || kjt.keys() != features_ || kjt.values().scalar_type() != torch::kInt64 ||
      kjt.lengths().scalar_type() != torch::kInt64 || (weighted && !all_weighted_)) {
    return std::nullopt;
  }
  const std::vector<int64_t>& offsets = kjt.offset_per_key();
  std::vector<torch::Tensor> ids(tables_.size());
  for (size_t t : consecutive_tables_) {
    ids[t] = kjt.values().slice(0, offsets[table_bags_[t].front()], offsets[table_bags_[t].back() + 1]);
  }
  const std::vector<torch::Tensor> rows = rows_of_tables(ids);
  std::vector<torch::Tensor> parts;
  for (size_t t : consecutive_tables_) parts.push_back(rows[t]);
  torch::Tensor values = parts.size() == 1 ? parts[0] : torch::cat(parts);
  return kjt.with_values(keys_, std::move(values), weighted ? kjt.weights() : torch::Tensor());
}

sparse::KeyedJaggedTensor RemappedBags::remap(const sparse::KeyedJaggedTensor& kjt,
                                              const RowsOfTables& rows_of_tables) const {
  torch::NoGradGuard no_grad;
  if (std::optional<sparse::KeyedJaggedTensor> aligned = remap_aligned(kjt, rows_of_tables)) return *std::move(aligned);
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
  return sparse::KeyedJaggedTensor::from_jagged(keys_, out);
}

}  // namespace tzrec::embedding
