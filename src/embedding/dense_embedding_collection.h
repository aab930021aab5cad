// DenseEmbeddingCollection: the dense embeddings of one data group's dense features, TorchEasyRec's
// DenseEmbeddingCollection (docs/tzrec-compatibility.md §5.11), held by the embedding group as
// "emb_impls.__BASE__.dense_ec".
//
// Features whose settings give the same group key share one module, "dense_embs.<group key>":
//   mlp, value_dim 1     "mlp#<dim>"
//   mlp, value_dim != 1  "mlp#<dim>#vdim#<value_dim>#feature_name#            <feature>" (with the
//                        twelve spaces of TorchEasyRec's key: one module per such feature)
//   autodis              "autodis#<dim>#<num_channels>#<keep_prob>#<temperature>", the two floats
//                        printed with six decimals and '.' → '_' ("autodis#16#3#0_800000#0_100000")
// A group's features are its configs' names, sorted and unique; groups come in the order their key
// first appears. State-dict keys: "dense_embs.<group key>.<per-feature key>" with the per-feature
// keys of autodis_embedding.h and mlp_embedding.h.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "embedding/autodis_embedding.h"
#include "embedding/embedding_config.h"
#include "embedding/mlp_embedding.h"
#include "sparse/keyed_tensor.h"

namespace tzrec::embedding {

// One feature's dense embedding request (before merging), or a merged group of them.
struct DenseEmbeddingConfig {
  DenseEmbeddingOptions options;  // type kMlp or kAutoDis
  int64_t embedding_dim = 0;
  int64_t value_dim = 1;  // the input width of each feature (AutoDis: 1)
  std::vector<std::string> feature_names;
};

// TorchEasyRec's group key of a config (see above).
std::string dense_embedding_group_key(const DenseEmbeddingConfig& config);

// Configs with the same group key merged into one, in the order the keys first appear, each with its
// feature names sorted and unique (TorchEasyRec's merge_same_config_features).
std::vector<DenseEmbeddingConfig> merge_same_config_features(const std::vector<DenseEmbeddingConfig>& configs);

class DenseEmbeddingCollectionImpl : public torch::nn::Module {
 public:
  // `configs`: one per feature (repeats allowed); merged as above.
  explicit DenseEmbeddingCollectionImpl(const std::vector<DenseEmbeddingConfig>& configs);

  // Each embedded feature's [B, embedding_dim] embedding, from its [B, value_dim] block of
  // `dense_features`. DataError when the batch lacks one of the features.
  std::map<std::string, torch::Tensor> forward(const sparse::KeyedTensor& dense_features);

  // The merged configs, in module order.
  const std::vector<DenseEmbeddingConfig>& grouped_configs() const { return grouped_; }

 private:
  struct Member {
    AutoDisEmbedding autodis{nullptr};
    MLPEmbedding mlp{nullptr};
  };
  std::vector<DenseEmbeddingConfig> grouped_;
  std::vector<Member> members_;  // parallel to grouped_
  torch::nn::ModuleDict dense_embs_{nullptr};
};
TORCH_MODULE(DenseEmbeddingCollection);

}  // namespace tzrec::embedding
