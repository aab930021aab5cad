#include "optim/dense_optimizer.h"

#include <cmath>
#include <set>

#include <ATen/Parallel.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "optim/adam_step.h"

namespace tzrec::optim {
namespace {

using Kind = DenseOptimizerOptions::Kind;

void validate(const DenseOptimizerOptions& o) {
  auto bad = [](const std::string& why) {
    throw ConfigError("train_config.dense_optimizer: " + why);
  };
  if (o.lr < 0) bad(fmt::format("invalid learning rate {} (must be >= 0)", o.lr));
  if (o.weight_decay < 0) bad(fmt::format("invalid weight_decay {} (must be >= 0)", o.weight_decay));
  if (o.kind == Kind::kSgd) {
    if (o.momentum < 0) bad(fmt::format("invalid momentum {} (must be >= 0)", o.momentum));
    if (o.nesterov && (o.momentum <= 0 || o.dampening != 0)) {
      bad("nesterov momentum requires momentum > 0 and dampening = 0");
    }
  }
  if (o.kind != Kind::kSgd && o.eps < 0) bad(fmt::format("invalid eps {} (must be >= 0)", o.eps));
  if (o.kind == Kind::kAdagrad) {
    if (o.lr_decay < 0) bad(fmt::format("invalid lr_decay {}", o.lr_decay));
    if (o.initial_accumulator_value < 0) {
      bad(fmt::format("invalid initial_accumulator_value {}", o.initial_accumulator_value));
    }
  }
  if (o.kind == Kind::kAdam || o.kind == Kind::kAdamW) {
    if (o.beta1 < 0 || o.beta1 >= 1) bad(fmt::format("invalid beta1 {} (must be in [0, 1))", o.beta1));
    if (o.beta2 < 0 || o.beta2 >= 1) bad(fmt::format("invalid beta2 {} (must be in [0, 1))", o.beta2));
  }
  // torch.optim.Adadelta: 0 <= rho <= 1; torch.optim.RMSprop: alpha >= 0.
  if (o.kind == Kind::kAdadelta && (o.rho < 0 || o.rho > 1)) {
    bad(fmt::format("invalid rho {} (must be in [0, 1])", o.rho));
  }
  if (o.kind == Kind::kRmsprop && o.alpha < 0) {
    bad(fmt::format("invalid alpha {} (must be >= 0)", o.alpha));
  }
}

}  // namespace

DenseOptimizer::DenseOptimizer(DenseOptimizerOptions options,
                               std::vector<std::pair<std::string, torch::Tensor>> named_params)
    : options_(options), params_(std::move(named_params)), states_(params_.size()) {
  validate(options_);
  std::set<std::string> names;
  for (const auto& [name, p] : params_) {
    TORCH_CHECK(names.insert(name).second, "DenseOptimizer: parameter ", name, " given twice");
    TORCH_CHECK(p.defined(), "DenseOptimizer: parameter ", name, " is undefined");
  }
  // torch.optim.Adagrad creates its state (step 0, sum = initial_accumulator_value) eagerly.
  if (options_.kind == Kind::kAdagrad) {
    for (size_t i = 0; i < params_.size(); ++i) init_state(i);
  }
}

void DenseOptimizer::init_state(size_t i) {
  ParamState& s = states_[i];
  const torch::Tensor& p = params_[i].second;
  auto opts = p.options().requires_grad(false);
  s.initialized = true;
  s.step = 0;
  switch (options_.kind) {
    case Kind::kSgd:
      break;  // momentum_buffer is created from the first gradient
    case Kind::kAdagrad:
      s.sum = torch::full(p.sizes(), options_.initial_accumulator_value, opts);
      break;
    case Kind::kAdam:
    case Kind::kAdamW:
      s.exp_avg = torch::zeros(p.sizes(), opts);
      s.exp_avg_sq = torch::zeros(p.sizes(), opts);
      if (options_.amsgrad) s.max_exp_avg_sq = torch::zeros(p.sizes(), opts);
      break;
    case Kind::kAdadelta:
      s.square_avg = torch::zeros(p.sizes(), opts);
      s.acc_delta = torch::zeros(p.sizes(), opts);
      break;
    case Kind::kRmsprop:
      s.square_avg = torch::zeros(p.sizes(), opts);
      break;
  }
}

void DenseOptimizer::zero_grad() {
  for (auto& [name, p] : params_) {
    if (p.grad().defined()) p.mutable_grad() = torch::Tensor();
  }
}

void DenseOptimizer::step() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    const torch::Tensor& p = params_[i].second;
    const torch::Tensor& grad = p.grad();
    if (!grad.defined()) continue;
    TORCH_CHECK(!grad.is_sparse(), "DenseOptimizer: parameter ", params_[i].first,
                " has a sparse gradient; embedding tables belong to the sparse optimizer");
    if (!states_[i].initialized) init_state(i);
    switch (options_.kind) {
      case Kind::kSgd:
        step_sgd(p, grad, states_[i]);
        break;
      case Kind::kAdagrad:
        step_adagrad(p, grad, states_[i]);
        break;
      case Kind::kAdam:
      case Kind::kAdamW:
        step_adam(p, grad, states_[i]);
        break;
      case Kind::kAdadelta:
        step_adadelta(p, grad, states_[i]);
        break;
      case Kind::kRmsprop:
        step_rmsprop(p, grad, states_[i]);
        break;
    }
  }
}

// torch.optim.SGD (_single_tensor_sgd).
void DenseOptimizer::step_sgd(const torch::Tensor& p, torch::Tensor g, ParamState& s) {
  const auto& o = options_;
  s.step += 1;  // not part of torch's SGD state; kept only for bookkeeping
  if (o.weight_decay != 0) g = g.add(p, o.weight_decay);
  if (o.momentum != 0) {
    if (!s.momentum_buffer.defined()) {
      s.momentum_buffer = g.clone().detach();
    } else {
      s.momentum_buffer.mul_(o.momentum).add_(g, 1 - o.dampening);
    }
    g = o.nesterov ? g.add(s.momentum_buffer, o.momentum) : s.momentum_buffer;
  }
  p.add_(g, -o.lr);
}

// torch.optim.Adagrad (_single_tensor_adagrad).
void DenseOptimizer::step_adagrad(const torch::Tensor& p, torch::Tensor g, ParamState& s) {
  const auto& o = options_;
  s.step += 1;
  if (o.weight_decay != 0) g = g.add(p, o.weight_decay);
  const double clr = o.lr / (1 + (s.step - 1) * o.lr_decay);
  s.sum.addcmul_(g, g, 1.0);
  torch::Tensor std = s.sum.sqrt().add_(o.eps);
  p.addcdiv_(g, std, -clr);
}

// The Adam / AdamW step in one pass (adam_step.h) for contiguous float32 CPU tensors; false for
// anything else, which takes the tensor-op path below. Large parameters are split over the
// intra-op threads.
bool DenseOptimizer::fused_adam_step(const torch::Tensor& p, const torch::Tensor& g, ParamState& s) const {
  const auto& o = options_;
  const torch::Tensor& vmax = s.max_exp_avg_sq;
  auto eligible = [&](const torch::Tensor& t) {
    return t.layout() == torch::kStrided && t.device().is_cpu() && t.scalar_type() == torch::kFloat &&
           t.is_contiguous() && t.numel() == p.numel();
  };
  if (!eligible(p) || !eligible(g) || !eligible(s.exp_avg) || !eligible(s.exp_avg_sq) ||
      (o.amsgrad && !eligible(vmax))) {
    return false;
  }
  AdamStepScalars k;
  if (o.kind == Kind::kAdamW) {
    k.decay = static_cast<float>(1 - o.lr * o.weight_decay);
  } else {
    k.l2 = static_cast<float>(o.weight_decay);
  }
  k.beta1 = static_cast<float>(o.beta1);
  k.one_minus_beta1 = static_cast<float>(1 - o.beta1);
  k.beta2 = static_cast<float>(o.beta2);
  k.one_minus_beta2 = static_cast<float>(1 - o.beta2);
  k.bias_correction2_sqrt = static_cast<float>(std::sqrt(1 - std::pow(o.beta2, s.step)));
  k.eps = static_cast<float>(o.eps);
  k.neg_step_size = static_cast<float>(-(o.lr / (1 - std::pow(o.beta1, s.step))));
  float* pp = p.data_ptr<float>();
  const float* gp = g.data_ptr<float>();
  float* m = s.exp_avg.data_ptr<float>();
  float* v = s.exp_avg_sq.data_ptr<float>();
  float* vm = o.amsgrad ? vmax.data_ptr<float>() : nullptr;
  at::parallel_for(0, p.numel(), 1 << 14, [&](int64_t begin, int64_t end) {
    adam_step(k, end - begin, pp + begin, gp + begin, m + begin, v + begin, vm == nullptr ? nullptr : vm + begin);
  });
  p.unsafeGetTensorImpl()->bump_version();  // written in place, as torch's in-place ops would mark it
  return true;
}

// torch.optim.Adam / AdamW (_single_tensor_adam / _single_tensor_adamw).
void DenseOptimizer::step_adam(const torch::Tensor& p, torch::Tensor g, ParamState& s) {
  const auto& o = options_;
  s.step += 1;
  if (fused_adam_step(p, g, s)) return;
  if (o.kind == Kind::kAdamW) {
    p.mul_(1 - o.lr * o.weight_decay);
  } else if (o.weight_decay != 0) {
    g = g.add(p, o.weight_decay);
  }
  s.exp_avg.mul_(o.beta1).add_(g, 1 - o.beta1);
  s.exp_avg_sq.mul_(o.beta2).addcmul_(g, g, 1 - o.beta2);
  const double bias_correction1 = 1 - std::pow(o.beta1, s.step);
  const double bias_correction2 = 1 - std::pow(o.beta2, s.step);
  const double step_size = o.lr / bias_correction1;
  const double bias_correction2_sqrt = std::sqrt(bias_correction2);
  torch::Tensor denom;
  if (o.amsgrad) {
    torch::maximum_out(s.max_exp_avg_sq, s.max_exp_avg_sq, s.exp_avg_sq);
    denom = (s.max_exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(o.eps);
  } else {
    denom = (s.exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(o.eps);
  }
  p.addcdiv_(s.exp_avg, denom, -step_size);
}

// torch.optim.Adadelta (_single_tensor_adadelta, maximize=False).
void DenseOptimizer::step_adadelta(const torch::Tensor& p, torch::Tensor g, ParamState& s) {
  const auto& o = options_;
  s.step += 1;
  if (o.weight_decay != 0) g = g.add(p, o.weight_decay);
  s.square_avg.mul_(o.rho).addcmul_(g, g, 1 - o.rho);
  torch::Tensor std = s.square_avg.add(o.eps).sqrt_();
  torch::Tensor delta = s.acc_delta.add(o.eps).sqrt_().div_(std).mul_(g);
  s.acc_delta.mul_(o.rho).addcmul_(delta, delta, 1 - o.rho);
  p.add_(delta, -o.lr);
}

// torch.optim.RMSprop (_single_tensor_rmsprop, momentum=0, centered=False, maximize=False).
void DenseOptimizer::step_rmsprop(const torch::Tensor& p, torch::Tensor g, ParamState& s) {
  const auto& o = options_;
  s.step += 1;
  if (o.weight_decay != 0) g = g.add(p, o.weight_decay);
  s.square_avg.mul_(o.alpha).addcmul_(g, g, 1 - o.alpha);
  torch::Tensor avg = s.square_avg.sqrt().add_(o.eps);
  p.addcdiv_(g, avg, -o.lr);
}

std::vector<std::string> DenseOptimizer::slot_names() const {
  switch (options_.kind) {
    case Kind::kSgd:
      if (options_.momentum != 0) return {"momentum_buffer"};
      return {};
    case Kind::kAdagrad:
      return {"sum", "step"};
    case Kind::kAdam:
    case Kind::kAdamW:
      if (options_.amsgrad) return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"};
      return {"exp_avg", "exp_avg_sq", "step"};
    case Kind::kAdadelta:
      return {"square_avg", "acc_delta", "step"};
    case Kind::kRmsprop:
      return {"square_avg", "step"};
  }
  return {};
}

torch::Tensor* DenseOptimizer::slot(ParamState& s, const std::string& name) {
  if (name == "momentum_buffer") return &s.momentum_buffer;
  if (name == "sum") return &s.sum;
  if (name == "exp_avg") return &s.exp_avg;
  if (name == "exp_avg_sq") return &s.exp_avg_sq;
  if (name == "max_exp_avg_sq") return &s.max_exp_avg_sq;
  if (name == "square_avg") return &s.square_avg;
  if (name == "acc_delta") return &s.acc_delta;
  return nullptr;  // "step" is a scalar
}

std::map<std::string, torch::Tensor> DenseOptimizer::state_dict() const {
  std::map<std::string, torch::Tensor> out;
  for (size_t i = 0; i < params_.size(); ++i) {
    const ParamState& s = states_[i];
    if (!s.initialized) continue;
    for (const std::string& name : slot_names()) {
      const std::string key = params_[i].first + "." + name;
      if (name == "step") {
        out[key] = torch::tensor(static_cast<float>(s.step), torch::kFloat32);
      } else if (const torch::Tensor* t = slot(s, name); t->defined()) {
        out[key] = *t;
      }
    }
  }
  return out;
}

void DenseOptimizer::load_state_dict(const std::map<std::string, torch::Tensor>& state) {
  const std::vector<std::string> slots = slot_names();
  // key → (param index, slot name)
  std::map<std::string, std::pair<size_t, std::string>> valid;
  for (size_t i = 0; i < params_.size(); ++i) {
    for (const std::string& name : slots) valid[params_[i].first + "." + name] = {i, name};
  }
  std::set<size_t> present;
  for (const auto& [key, value] : state) {
    auto it = valid.find(key);
    if (it == valid.end()) {
      throw CheckpointError(fmt::format(
          "dense optimizer state '{}' matches no parameter/state of this optimizer; the checkpoint "
          "was written with a different model or dense_optimizer (use --ignore_restore_optimizer)",
          key));
    }
    const auto& [i, name] = it->second;
    present.insert(i);
    const torch::Tensor& p = params_[i].second;
    if (name == "step" ? value.numel() != 1 : value.sizes() != p.sizes()) {
      throw CheckpointError(fmt::format(
          "dense optimizer state '{}' has shape [{}] in the checkpoint, expected [{}]", key,
          fmt::join(value.sizes(), ", "),
          name == "step" ? std::string() : fmt::format("{}", fmt::join(p.sizes(), ", "))));
    }
  }
  for (size_t i : present) {
    for (const std::string& name : slots) {
      const std::string key = params_[i].first + "." + name;
      if (state.count(key) == 0) {
        throw CheckpointError(fmt::format(
            "dense optimizer state '{}' is missing from the checkpoint while other state of "
            "parameter '{}' is present; the checkpoint is incomplete or from another optimizer",
            key, params_[i].first));
      }
    }
  }
  torch::NoGradGuard no_grad;
  for (size_t i : present) {
    init_state(i);
    ParamState& s = states_[i];
    const torch::Tensor& p = params_[i].second;
    for (const std::string& name : slots) {
      const torch::Tensor& value = state.at(params_[i].first + "." + name);
      if (name == "step") {
        s.step = value.to(torch::kFloat64).item<double>();
      } else {
        *slot(s, name) = value.detach().to(p.device(), p.scalar_type()).clone();
      }
    }
  }
}

}  // namespace tzrec::optim
