#include "nn/variational_dropout.h"

#include <limits>
#include <numeric>

namespace tzrec::nn {

namespace {

constexpr double kTemperature = 0.1;  // tzrec's concrete_dropout_neuron temperature

// log(v + ε) - log(1 - v + ε), ε = float32 epsilon (as tzrec computes the logit).
torch::Tensor eps_logit(const torch::Tensor& v) {
  const double eps = std::numeric_limits<float>::epsilon();
  return torch::log(v + eps) - torch::log(1.0 - v + eps);
}

}  // namespace

VariationalDropoutImpl::VariationalDropoutImpl(std::vector<int64_t> feature_dims, double regularization_lambda)
    : feature_dims_(std::move(feature_dims)), regularization_lambda_(regularization_lambda) {
  TORCH_CHECK(!feature_dims_.empty(), "VariationalDropout needs at least one feature");
  for (int64_t d : feature_dims_) TORCH_CHECK(d > 0, "VariationalDropout: feature width must be > 0, got ", d);
  total_dim_ = std::accumulate(feature_dims_.begin(), feature_dims_.end(), int64_t{0});
  std::vector<int64_t> column_feature;
  column_feature.reserve(total_dim_);
  for (size_t f = 0; f < feature_dims_.size(); ++f) column_feature.insert(column_feature.end(), feature_dims_[f], static_cast<int64_t>(f));
  column_feature_ = torch::tensor(column_feature, torch::kInt64);
  feature_p = register_parameter("feature_p", torch::randn({static_cast<int64_t>(feature_dims_.size())}));
}

torch::Tensor VariationalDropoutImpl::keep_probabilities() const { return 1.0 - torch::sigmoid(feature_p); }

std::pair<torch::Tensor, torch::Tensor> VariationalDropoutImpl::forward(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 2 && x.size(1) == total_dim_, "VariationalDropout: input must be [B, ", total_dim_,
              "], got ", x.sizes());
  const int64_t batch = x.size(0);
  const torch::Tensor dropout_p = torch::sigmoid(feature_p);  // [F]
  torch::Tensor drop;                                          // [B or 1, F]
  if (is_training()) {
    const torch::Tensor p = dropout_p.unsqueeze(0).expand({batch, -1});
    const torch::Tensor u = torch::rand({batch, dropout_p.size(0)}, dropout_p.options());
    drop = torch::sigmoid((eps_logit(p) + eps_logit(u)) / kTemperature);
  } else {
    drop = dropout_p.unsqueeze(0);
  }
  if (column_feature_.device() != x.device()) column_feature_ = column_feature_.to(x.device());
  const torch::Tensor per_column = drop.index_select(1, column_feature_);  // [B or 1, Σ dims]
  torch::Tensor noisy = x * (1.0 - per_column.to(x.scalar_type()));
  torch::Tensor penalty = (1.0 - dropout_p).sum() * (regularization_lambda_ / static_cast<double>(batch));
  return {noisy, penalty};
}

}  // namespace tzrec::nn
