// The input layout DLRM and WuKong share (tzrec/models/dlrm.py, wukong.py): a "sparse" feature
// group of embeddings of one dim D (a model with a single group takes it as the sparse group,
// whatever its name) and, next to it, an optional "dense" group passed through `dense_mlp`,
// whose last width must be D so that its output joins the embeddings as one more feature vector.
#pragma once

#include <string>
#include <vector>

#include "models/model.h"
#include "nn/mlp.h"

namespace tzrec::models {

class DenseSparseModel : public Model {
 protected:
  using Model::Model;

  // After init_input(): resolves the groups and builds "dense_mlp" (from dense_mlp_config; null
  // when the model has none). model_name ("DLRM") and path ("model_config.dlrm") name the model in
  // errors. Throws ConfigError for a missing or non-DEEP "sparse" group, unequal or dense
  // features in it, a "dense" group without dense_mlp, a dense_mlp whose last width is not D, and,
  // with refuse_sequence_encoders, sequence groups or encoders in either group. A dense_mlp without
  // a "dense" group is ignored with a warning (as TorchEasyRec).
  void init_dense_sparse(const std::string& model_name, const std::string& path, const protos::MLP* dense_mlp_config,
                         bool refuse_sequence_encoders);
  // [B, N, D] sparse embeddings, preceded by dense_mlp's output when there is a dense group
  // ([B, 1 + N, D]); `dense_out` receives that output (undefined without).
  torch::Tensor feature_vectors(const std::map<std::string, torch::Tensor>& grouped, torch::Tensor* dense_out = nullptr);

  std::string sparse_group_;    // "sparse", or the only feature group
  int64_t sparse_num_ = 0;      // N sparse features
  int64_t sparse_dim_ = 0;      // D
  nn::MLP dense_mlp_{nullptr};  // only with a "dense" group next to the sparse one
};

}  // namespace tzrec::models
