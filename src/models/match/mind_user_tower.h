// MINDUserTower: MIND's user tower (TorchEasyRec's MINDUserTower, tzrec/models/mind.py): the user
// group through user_mlp, the behaviour history (a SEQUENCE group, "<history>.sequence" [B, S, d])
// through hist_seq_mlp and the capsule layer (nn/capsule_layer.h) into at most max_k interests,
// each concatenated with the user vector, through concat_mlp, masked to the valid interests, an
// output Linear without bias (output_dim > 0) and L2-normalised with COSINE similarity.
//   → interests [B, max_k, D] (invalid ones zero), mask [B, max_k] bool
// user_mlp / hist_seq_mlp: all hidden layers but the last as an MLP (TorchEasyRec passes it only
// activation, use_bn and the first dropout_ratio; hist_seq_mlp's has no bias) and the last as a
// Linear ("user_mlp_out", "_hist_seq_mlp_out" without bias); with one hidden layer just that
// Linear ("user_mlp", "_hist_seq_mlp"). Without hist_seq_mlp the capsules read the history as is.
// Submodules: "embedding_group" (the user and history groups), "group_variational_dropouts",
// "user_mlp", "user_mlp_out", "_hist_seq_mlp", "_hist_seq_mlp_out", "_capsule_layer"
// ("bilinear_matrix"), "_concat_mlp", "output".
#pragma once

#include <string>
#include <utility>

#include <torch/torch.h>

#include "embedding/embedding_group.h"
#include "models/group_variational_dropouts.h"
#include "models/match/match_options.h"
#include "nn/capsule_layer.h"
#include "nn/mlp.h"
#include "tzrec/protos/tower.pb.h"

namespace tzrec::models {

class MINDUserTowerImpl : public torch::nn::Module {
 public:
  // `group`: the tower's EmbeddingGroup over its user (DEEP) and history (SEQUENCE) groups.
  // ConfigError / NotSupportedError at `path` for bad or ignored MLP settings.
  MINDUserTowerImpl(const protos::MINDUserTower& tower, const std::string& path, embedding::EmbeddingGroup group,
                    const protos::ModelConfig& model_config, const MatchOptions& options);
  std::pair<torch::Tensor, torch::Tensor> forward(const sparse::Batch& batch);

  embedding::EmbeddingGroup embedding_group{nullptr};
  const GroupVariationalDropouts& dropouts() const { return dropouts_; }

 private:
  std::string input_, history_;
  bool cosine_ = false;
  GroupVariationalDropouts dropouts_;
  nn::MLP user_mlp_{nullptr};
  torch::nn::Linear user_linear_{nullptr};  // "user_mlp_out", or "user_mlp" with one hidden layer
  nn::MLP hist_mlp_{nullptr};
  torch::nn::Linear hist_linear_{nullptr};  // "_hist_seq_mlp_out", or "_hist_seq_mlp"
  nn::CapsuleLayer capsule_{nullptr};
  nn::MLP concat_mlp_{nullptr};
  torch::nn::Linear output_{nullptr};
};
TORCH_MODULE(MINDUserTower);

}  // namespace tzrec::models
