// Dense-parameter optimizers with named state, reproducing torch.optim (SGD, Adagrad, Adam, AdamW)
// update formulas exactly (single-tensor, non-foreach code path), as TorchEasyRec's
// `dense_optimizer` uses them (docs/tzrec-compatibility.md §2.7). For a parameter p with gradient
// g at step t:
//   SGD:      g += wd*p ; if momentum: buf = t==1 ? g : momentum*buf + (1-dampening)*g ;
//             g = nesterov ? g + momentum*buf : buf ;  p -= lr*g
//   Adagrad:  g += wd*p ; clr = lr / (1 + (t-1)*lr_decay) ; sum += g*g ;
//             p -= clr * g / (sqrt(sum) + eps)          (sum starts at initial_accumulator_value)
//   Adam:     g += wd*p ; m = beta1*m + (1-beta1)*g ; v = beta2*v + (1-beta2)*g*g ;
//             vmax = max(vmax, v) if amsgrad ; denom = sqrt(amsgrad ? vmax : v) / sqrt(1-beta2^t) + eps ;
//             p -= (lr / (1-beta1^t)) * m / denom
//   AdamW:    p *= 1 - lr*wd ; then Adam without the L2 term.
//   Adadelta: g += wd*p ; sq = rho*sq + (1-rho)*g*g ; delta = sqrt(acc+eps) / sqrt(sq+eps) * g ;
//             acc = rho*acc + (1-rho)*delta*delta ; p -= lr*delta
//   RMSprop:  g += wd*p ; sq = alpha*sq + (1-alpha)*g*g ; p -= lr * g / (sqrt(sq) + eps)
//             (tzrec's RMSpropOptimizer has no momentum / centered fields, so torch's defaults
//             momentum=0, centered=False apply)
// Parameters whose gradient is undefined are skipped (their state and step do not advance), as in
// torch. zero_grad() sets gradients to undefined (torch 2.x default set_to_none=True, which the
// PyTorch TorchEasyRec runs with), so parameters not reached by backward are not updated.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

namespace tzrec::optim {

struct DenseOptimizerOptions {
  enum class Kind { kSgd, kAdagrad, kAdam, kAdamW, kAdadelta, kRmsprop };
  Kind kind = Kind::kSgd;
  double lr = 0.002;
  // SGD
  double momentum = 0.9;  // tzrec config default (torch's own default is 0)
  double dampening = 0.0;
  bool nesterov = false;
  // all kinds: L2 for SGD/Adagrad/Adam, decoupled for AdamW
  double weight_decay = 0.0;
  // Adagrad
  double lr_decay = 0.0;
  double initial_accumulator_value = 0.0;
  // Adagrad and Adam/AdamW: torch defaults are 1e-10 (Adagrad) and 1e-8 (Adam, AdamW); the
  // optimizer builder sets the configured value.
  double eps = 1e-8;
  // Adam / AdamW
  double beta1 = 0.9;
  double beta2 = 0.999;
  bool amsgrad = false;
  // Adadelta (eps: torch default 1e-6)
  double rho = 0.9;
  // RMSprop (eps: torch default 1e-8)
  double alpha = 0.99;
};

class DenseOptimizer {
 public:
  // named_params: (fully-qualified name, parameter). Names must be unique (TORCH_CHECK). Invalid
  // hyper-parameters (lr < 0, nesterov without momentum or with dampening, betas outside [0, 1),
  // eps < 0) → tzrec::ConfigError.
  DenseOptimizer(DenseOptimizerOptions options,
                 std::vector<std::pair<std::string, torch::Tensor>> named_params);

  void zero_grad();
  void step();
  void set_lr(double lr) { options_.lr = lr; }
  double lr() const { return options_.lr; }
  const DenseOptimizerOptions& options() const { return options_; }
  const std::vector<std::pair<std::string, torch::Tensor>>& named_params() const { return params_; }

  // Keys (only for parameters that already have state, i.e. were stepped at least once, like
  // torch's lazily created state):
  //   SGD (momentum != 0): "<param>.momentum_buffer"
  //   Adagrad: "<param>.sum", "<param>.step"          (Adagrad state exists from construction)
  //   Adam/AdamW: "<param>.exp_avg", "<param>.exp_avg_sq", "<param>.step"
  //               [+ "<param>.max_exp_avg_sq" with amsgrad]
  //   Adadelta: "<param>.square_avg", "<param>.acc_delta", "<param>.step"
  //   RMSprop:  "<param>.square_avg", "<param>.step"
  // step is a float32 scalar tensor as in torch.optim. Tensors are the live state.
  std::map<std::string, torch::Tensor> state_dict() const;
  // Replaces the state of every parameter that has keys in `state` (a parameter without any keys
  // keeps a fresh state). An unknown key (no such parameter / slot), a missing slot for a
  // parameter that has some keys, or a shape mismatch → tzrec::CheckpointError naming the key.
  void load_state_dict(const std::map<std::string, torch::Tensor>& state);

 private:
  struct ParamState {
    bool initialized = false;
    double step = 0;
    torch::Tensor momentum_buffer;  // SGD
    torch::Tensor sum;              // Adagrad
    torch::Tensor exp_avg, exp_avg_sq, max_exp_avg_sq;  // Adam / AdamW
    torch::Tensor square_avg, acc_delta;                // Adadelta / RMSprop
  };
  std::vector<std::string> slot_names() const;
  // The tensor slot called `name` ("step" is not a tensor slot → nullptr).
  static torch::Tensor* slot(ParamState& state, const std::string& name);
  static const torch::Tensor* slot(const ParamState& state, const std::string& name) {
    return slot(const_cast<ParamState&>(state), name);
  }
  void init_state(size_t i);
  void step_sgd(const torch::Tensor& p, torch::Tensor g, ParamState& s);
  void step_adagrad(const torch::Tensor& p, torch::Tensor g, ParamState& s);
  void step_adam(const torch::Tensor& p, torch::Tensor g, ParamState& s);
  bool fused_adam_step(const torch::Tensor& p, const torch::Tensor& g, ParamState& s) const;
  void step_adadelta(const torch::Tensor& p, torch::Tensor g, ParamState& s);
  void step_rmsprop(const torch::Tensor& p, torch::Tensor g, ParamState& s);

  DenseOptimizerOptions options_;
  std::vector<std::pair<std::string, torch::Tensor>> params_;
  std::vector<ParamState> states_;
};

}  // namespace tzrec::optim
