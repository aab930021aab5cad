#include "loss/pareto_loss_weights.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>

namespace tzrec::loss {

std::vector<double> project_onto_simplex(const std::vector<double>& v, double total) {
  if (!(total > 0)) throw std::invalid_argument("project_onto_simplex: total must be > 0");
  std::vector<double> sorted(v);
  std::sort(sorted.begin(), sorted.end(), std::greater<double>());
  // θ such that Σ max(v_i − θ, 0) = total: the largest prefix whose shifted entries stay positive.
  double prefix = 0.0;
  double theta = 0.0;
  for (size_t j = 0; j < sorted.size(); ++j) {
    prefix += sorted[j];
    const double candidate = (prefix - total) / static_cast<double>(j + 1);
    if (sorted[j] - candidate > 0) theta = candidate;
  }
  std::vector<double> x(v.size());
  for (size_t i = 0; i < v.size(); ++i) x[i] = std::max(v[i] - theta, 0.0);
  return x;
}

std::vector<double> pareto_loss_weights(const torch::Tensor& gram, const std::vector<double>& min_weights) {
  const int64_t k = static_cast<int64_t>(min_weights.size());
  if (k == 0) throw std::invalid_argument("pareto_loss_weights: no losses");
  if (gram.dim() != 2 || gram.size(0) != k || gram.size(1) != k) {
    throw std::invalid_argument("pareto_loss_weights: the Gram matrix must be [" + std::to_string(k) + ", " +
                                std::to_string(k) + "]");
  }
  double bound_sum = 0.0;
  for (double c : min_weights) {
    if (!std::isfinite(c) || c < 0) throw std::invalid_argument("pareto_loss_weights: bounds must be finite and >= 0");
    bound_sum += c;
  }
  if (!(bound_sum < 1.0)) throw std::invalid_argument("pareto_loss_weights: the bounds must sum to less than 1");
  torch::Tensor ggt = gram.to(torch::kFloat64).cpu();
  if (!torch::isfinite(ggt).all().item<bool>()) {
    throw std::invalid_argument("pareto_loss_weights: the task gradients are not finite");
  }
  // The solution does not change when GGᵀ is scaled; scaling keeps tiny gradients away from the
  // pseudo-inverse's cut-off.
  const double scale = ggt.abs().max().item<double>();
  if (scale > 0) ggt = ggt / scale;
  torch::Tensor c = torch::tensor(min_weights, torch::kFloat64).unsqueeze(1);  // [K, 1]
  torch::Tensor m = torch::zeros({k + 1, k + 1}, torch::kFloat64);
  m.slice(0, 0, k).slice(1, 0, k).copy_(ggt);
  m.slice(0, 0, k).select(1, k).fill_(1.0);
  m.select(0, k).slice(0, 0, k).fill_(1.0);
  torch::Tensor z = torch::empty({k + 1, 1}, torch::kFloat64);
  z.slice(0, 0, k).copy_(-ggt.matmul(c));
  z[k][0] = 1.0 - bound_sum;
  torch::Tensor solution = torch::linalg_pinv(m).matmul(z).squeeze(1);  // [K + 1]
  std::vector<double> hat(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) hat[static_cast<size_t>(i)] = solution[i].item<double>();
  std::vector<double> x = project_onto_simplex(hat, 1.0 - bound_sum);
  for (int64_t i = 0; i < k; ++i) x[static_cast<size_t>(i)] += min_weights[static_cast<size_t>(i)];
  return x;
}

}  // namespace tzrec::loss
