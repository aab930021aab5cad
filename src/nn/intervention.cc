#include "nn/intervention.h"

namespace tzrec::nn {
namespace {

// Q of A = QR with diag(R) ≥ 0 for a tall A (torch's _make_orthogonal).
torch::Tensor make_orthogonal(const torch::Tensor& a) {
  auto [x, tau] = torch::geqrf(a);
  torch::Tensor q = torch::linalg_householder_product(x, tau);
  return q * x.diagonal(0, -2, -1).sgn().unsqueeze(-2);
}

}  // namespace

OrthogonalMapImpl::OrthogonalMapImpl(int64_t n) { base = register_buffer("base", torch::eye(n)); }

torch::Tensor OrthogonalMapImpl::forward(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 2 && x.size(0) >= x.size(1), "orthogonal map: expected a tall matrix, got ", x.sizes());
  torch::Tensor a = x.tril(-1);
  torch::Tensor tau = 2.0 / (1.0 + (a * a).sum(-2));
  torch::Tensor q = torch::linalg_householder_product(a, tau);
  // The diagonal of X holds ±1 and is not differentiated (torch casts it to int).
  q = q * x.diagonal(0, -2, -1).detach().to(torch::kInt).to(q.scalar_type()).unsqueeze(-2);
  return torch::matmul(base, q);
}

WeightParametrizationImpl::WeightParametrizationImpl(int64_t n, int64_t k) {
  // torch's right_inverse with trivialization, applied to an orthogonal_-initialised W: base is W
  // completed by random columns to an orthogonal basis, original is −I (so that W = base[:, :k]).
  torch::Tensor w = torch::empty({n, k});
  torch::nn::init::orthogonal_(w);
  torch::Tensor base = make_orthogonal(torch::cat({w, torch::randn({n, n - k})}, 1));
  torch::Tensor neg_id = torch::zeros({n, k});
  neg_id.diagonal().fill_(-1.0);
  original = register_parameter("original", neg_id);
  map = register_module("0", OrthogonalMap(n));
  map->base.copy_(base);
}

RotateLayerImpl::RotateLayerImpl(int64_t base_dim, int64_t low_rank_dim) {
  TORCH_CHECK(base_dim > low_rank_dim && low_rank_dim > 0, "RotateLayer: need base_dim > low_rank_dim > 0, got ",
              base_dim, " and ", low_rank_dim);
  // "parametrizations.weight": a plain container, as torch's ModuleDict of parametrizations.
  auto parametrizations = std::make_shared<torch::nn::Module>();
  weight_ = parametrizations->register_module("weight", WeightParametrization(base_dim, low_rank_dim));
  register_module("parametrizations", parametrizations);
}

torch::Tensor RotateLayerImpl::forward(const torch::Tensor& x) {
  torch::Tensor w = weight();
  return torch::matmul(x.to(w.scalar_type()), w);
}

InterventionImpl::InterventionImpl(int64_t base_dim, int64_t source_dim, int64_t low_rank_dim, double dropout_ratio)
    : base_dim_(base_dim) {
  base_rotate_layer_ = register_module("base_rotate_layer", RotateLayer(base_dim, low_rank_dim));
  source_rotate_layer_ = register_module("source_rotate_layer", RotateLayer(source_dim, low_rank_dim));
  dropout_ = register_module("dropout", torch::nn::Dropout(dropout_ratio));
}

torch::Tensor InterventionImpl::forward(const torch::Tensor& base, const torch::Tensor& source) {
  torch::Tensor wb = base_rotate_layer_->weight();                        // [base_dim, r]
  torch::Tensor rotated_base = torch::matmul(base.to(wb.scalar_type()), wb);  // [B, r]
  torch::Tensor rotated_source = source_rotate_layer_->forward(source.detach());
  torch::Tensor out = torch::matmul(rotated_base - rotated_source, wb.t()) + base;
  return dropout_->forward(out.to(base.scalar_type()));
}

}  // namespace tzrec::nn
