// VariationalDropout (tzrec/modules/variational_dropout.py; "Dropout Feature Ranking for Deep
// Learning Models", arXiv 1712.08645): one learnt dropout rate per feature of a feature group,
// whose keep probabilities rank the features.
#pragma once

#include <utility>
#include <vector>

#include <torch/torch.h>

namespace tzrec::nn {

class VariationalDropoutImpl : public torch::nn::Module {
 public:
  // feature_dims: the width of each feature in the group's [B, Σ dims] output, in order (at least
  // one). Parameter "feature_p" [num features], initialised N(0, 1) like tzrec; the dropout rate of
  // feature f is sigmoid(feature_p[f]).
  VariationalDropoutImpl(std::vector<int64_t> feature_dims, double regularization_lambda);

  // x: [B, Σ dims] → {noisy x [B, Σ dims], penalty (scalar)} with p = sigmoid(feature_p):
  //   training: x * (1 - z), z[b, f] = sigmoid((logit(p_f) + logit(u[b, f])) / 0.1), u ~ U(0, 1)
  //             (logits with ε = float32 epsilon inside both logs), z repeated over feature f's width;
  //   eval:     x * (1 - p_f) (the expected keep probability);
  //   penalty:  regularization_lambda / B * Σ_f (1 - p_f), added to the losses as
  //             "<group>_feature_p_loss" by the model.
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& x);

  // 1 - sigmoid(feature_p): the probability of keeping each feature.
  torch::Tensor keep_probabilities() const;

  torch::Tensor feature_p;

 private:
  std::vector<int64_t> feature_dims_;
  torch::Tensor column_feature_;  // [Σ dims] int64: the feature of each input column (on x's device)
  int64_t total_dim_ = 0;
  double regularization_lambda_;
};
TORCH_MODULE(VariationalDropout);

}  // namespace tzrec::nn
