// Model::total_loss: the sum of the losses, or the Pareto-efficient weighting of the task losses
// (model_config.use_pareto_loss_weight, loss/pareto_loss_weights.h).
#include "base/logging.h"
#include "loss/pareto_loss_weights.h"
#include "models/model.h"

namespace tzrec::models {

torch::Tensor Model::total_loss(const TensorMap& losses) {
  loss_weights_.clear();
  if (model_config_.use_pareto_loss_weight()) loss_weights_ = pareto_loss_weights(losses);
  torch::Tensor total;
  for (const auto& [name, value] : losses) {
    auto it = loss_weights_.find(name);
    torch::Tensor term = it == loss_weights_.end() ? value : value * it->second;
    total = total.defined() ? total + term : term;
  }
  return total;
}

std::map<std::string, double> Model::pareto_loss_weights(const TensorMap& losses) {
  std::vector<torch::Tensor> params;
  for (auto& [name, p] : dense_parameters()) {
    if (p.requires_grad()) params.push_back(p);
  }
  std::vector<std::string> names;
  std::vector<double> bounds;
  for (const LossEntry& l : losses_) {
    names.push_back(l.name);
    bounds.push_back(tasks_[l.task].pareto_min_loss_weight);
  }
  const int64_t k = static_cast<int64_t>(names.size());
  // Gram matrix of the task gradients, accumulated parameter by parameter in float64.
  torch::Tensor gram = torch::zeros({k, k}, torch::kFloat64);
  if (!params.empty()) {
    std::vector<std::vector<torch::Tensor>> grads;
    for (const std::string& name : names) {
      auto it = losses.find(name);
      TORCH_CHECK(it != losses.end(), "total_loss: losses have no '", name, "'");
      TORCH_CHECK(it->second.requires_grad(), "total_loss: loss '", name, "' does not depend on the parameters");
      // Only the nodes between this loss and the dense parameters run: no embedding backward, so
      // no table or optimizer state is touched.
      grads.push_back(torch::autograd::grad({it->second}, params, /*grad_outputs=*/{}, /*retain_graph=*/true,
                                            /*create_graph=*/false, /*allow_unused=*/true));
    }
    for (size_t p = 0; p < params.size(); ++p) {
      std::vector<torch::Tensor> rows;
      for (int64_t i = 0; i < k; ++i) {
        const torch::Tensor& g = grads[static_cast<size_t>(i)][p];
        rows.push_back(g.defined() ? g.reshape({-1}).to(torch::kFloat64)
                                   : torch::zeros({params[p].numel()}, torch::kFloat64));
      }
      torch::Tensor stacked = torch::stack(rows);  // [K, numel]
      gram += stacked.matmul(stacked.t());
    }
  }
  std::vector<double> weights;
  if (torch::isfinite(gram).all().item<bool>()) {
    weights = loss::pareto_loss_weights(gram, bounds);  // bounds checked when the model was built
  } else {
    // inf/nan gradients (e.g. an fp16 overflow the grad scaler will skip): equal shares above the
    // bounds for this step.
    double free = 1.0;
    for (double c : bounds) free -= c;
    for (double c : bounds) weights.push_back(c + free / static_cast<double>(k));
    log::warning("use_pareto_loss_weight: the task gradients of this batch are not finite; the losses get equal "
                 "weights above their pareto_min_loss_weight for this step");
  }
  std::map<std::string, double> out;
  for (int64_t i = 0; i < k; ++i) out[names[static_cast<size_t>(i)]] = weights[static_cast<size_t>(i)];
  return out;
}

}  // namespace tzrec::models
