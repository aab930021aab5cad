// EmbeddingBagCollection: a set of tables and pooled lookups (bags) into them, TorchRec-style.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "embedding/embedding_config.h"
#include "sparse/keyed_jagged_tensor.h"
#include "sparse/keyed_tensor.h"

namespace tzrec::embedding {

class EmbeddingBagCollectionImpl : public torch::nn::Module {
 public:
  // Throws tzrec::ConfigError for a bag naming an unknown table, duplicate table names or bag keys,
  // bad pooling, non-positive sizes or an unknown init_fn.
  EmbeddingBagCollectionImpl(std::vector<TableConfig> tables, std::vector<BagConfig> bags);

  // kjt must contain every bag's feature (extra keys ignored). Returns a KeyedTensor with keys =
  // bag keys in bag order, each block [B, table dim]: sum or mean of the (weighted) rows of the
  // row's ids; an empty bag gives zeros. Weight gradients are sparse (torch::embedding_bag with
  // sparse=true): never a dense [num_embeddings, dim] gradient.
  // Ids outside [0, num_embeddings) → tzrec::DataError naming the feature and table.
  sparse::KeyedTensor forward(const sparse::KeyedJaggedTensor& kjt);

  // Tables in config order; weight is the registered parameter ("embedding_bags.<table>.weight").
  std::vector<EmbeddingTable> tables();
  const std::vector<TableConfig>& table_configs() const { return table_configs_; }
  const std::vector<BagConfig>& bag_configs() const { return bag_configs_; }
  // Output width of every bag, in bag order.
  std::vector<int64_t> bag_dims() const;

  // FBGEMM's sparse-optimizer gradient clipping: in backward, the gradient of every pooled output
  // [B, dim] is clamped to [-max_gradient, max_gradient] before it reaches the table rows (and the
  // per-id weights). Disabled by default. Set from SparseOptimizerOptions{gradient_clipping,
  // max_gradient}.
  void set_gradient_clipping(bool enabled, double max_gradient);

 private:
  std::vector<TableConfig> table_configs_;
  std::vector<BagConfig> bag_configs_;
  std::vector<int64_t> bag_table_index_;  // bag → index into table_configs_
  torch::nn::ModuleDict embedding_bags_{nullptr};  // "embedding_bags" → "<table>" → "weight"
  std::vector<torch::Tensor> weights_;             // [num_embeddings, dim] per table
  bool clip_gradient_ = false;
  double max_gradient_ = 1.0;
};
TORCH_MODULE(EmbeddingBagCollection);

}  // namespace tzrec::embedding
