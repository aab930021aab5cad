// Exponential moving average of dense parameters, as TorchEasyRec's DenseEMA
// (tzrec/optim/ema.py: torch.optim.swa_utils.AveragedModel with get_ema_multi_avg_fn(decay),
// use_buffers=False), updated after every successful dense optimizer step:
//   n_averaged == 0: ema = p            (the first update copies the parameters)
//   otherwise:       ema = lerp(ema, p, 1 - decay) = ema + (1 - decay) * (p - ema)
//   n_averaged += 1
// Shadow tensors have the parameters' shapes and dtypes and never require grad.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

namespace tzrec::optim {

class DenseEma {
 public:
  // TorchEasyRec's DENSE_EMA_N_AVERAGED key of the update count in the EMA state.
  static constexpr const char* kNAveragedKey = "__n_averaged__";

  // decay must lie in [0, 1] (else tzrec::ConfigError naming train_config.dense_optimizer.ema.decay).
  // Shadows start as copies of the parameters (AveragedModel deep-copies the module).
  DenseEma(std::vector<std::pair<std::string, torch::Tensor>> named_params, double decay);

  void update();
  int64_t n_averaged() const { return n_averaged_; }
  double decay() const { return decay_; }

  // "<param>" → shadow tensor (live) plus kNAveragedKey → int64 scalar.
  std::map<std::string, torch::Tensor> state_dict() const;
  // Every parameter key and kNAveragedKey must be present with the parameter's shape (else
  // tzrec::CheckpointError naming the key); unknown keys are errors too.
  void load_state_dict(const std::map<std::string, torch::Tensor>& state);

  // Exchanges the values of the live parameters and their shadows (in place, no reallocation),
  // so calling it twice restores both. Used by EmaSwapGuard.
  void swap_with_params();

 private:
  std::vector<std::pair<std::string, torch::Tensor>> params_;
  std::vector<torch::Tensor> shadows_;
  double decay_;
  int64_t n_averaged_ = 0;
};

// While alive, the model's dense parameters hold the EMA values (TorchEasyRec's
// DenseEMA.average_parameters()); the destructor swaps the trained values back.
class EmaSwapGuard {
 public:
  explicit EmaSwapGuard(DenseEma* ema) : ema_(ema) {
    if (ema_ != nullptr) ema_->swap_with_params();
  }
  ~EmaSwapGuard() {
    if (ema_ != nullptr) ema_->swap_with_params();
  }
  EmaSwapGuard(const EmaSwapGuard&) = delete;
  EmaSwapGuard& operator=(const EmaSwapGuard&) = delete;

 private:
  DenseEma* ema_;
};

}  // namespace tzrec::optim
