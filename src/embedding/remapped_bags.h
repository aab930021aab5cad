// The bags of a collection that maps raw ids to rows per table before an inner
// EmbeddingBagCollection looks them up (zch_embedding_bag_collection.h,
// dynamic_embedding_bag_collection.h): which bags read each table, the inner collection's bags,
// and the remapping of a KeyedJaggedTensor table by table.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "embedding/embedding_config.h"
#include "sparse/keyed_jagged_tensor.h"

namespace tzrec::embedding {

class RemappedBags {
 public:
  // `tables`: the collection's table names in order; every bag names one of them.
  RemappedBags(const std::vector<std::string>& tables, std::vector<BagConfig> bags);

  const std::vector<BagConfig>& bags() const { return bags_; }
  // The inner collection's bags: each reads the remapped rows under its bag key (a feature feeding
  // two tables is remapped by each of them), without an output key.
  std::vector<BagConfig> inner_bags() const;

  // One key per bag (its key()), in bag order: lengths and weights (weighted bags) as in `kjt`,
  // values = rows_of(t, ids) of table t's ids — those of all its bags, concatenated in bag order,
  // int64 — cut back into the bags. Tables without bags are skipped. DataError for a bag whose
  // feature `kjt` lacks.
  sparse::KeyedJaggedTensor remap(const sparse::KeyedJaggedTensor& kjt,
                                  const std::function<torch::Tensor(size_t t, const torch::Tensor& ids)>& rows_of) const;

 private:
  std::vector<std::string> tables_;
  std::vector<BagConfig> bags_;
  std::vector<std::vector<size_t>> table_bags_;  // table index → indices of its bags, in bag order
};

}  // namespace tzrec::embedding
