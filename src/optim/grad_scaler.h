// Dynamic loss scaling for FP16 training (train_config.grad_scaler,
// docs/tzrec-compatibility.md §2.5), with the semantics of torch.cuda.amp.GradScaler that
// TorchEasyRec's TZRecOptimizer uses:
//   * backward runs on scale(loss) = loss * S, so small fp16 gradients do not flush to zero;
//   * unscale(params) multiplies every gradient by 1/S (S's reciprocal in float32, as torch) and
//     reports whether any gradient holds inf or nan (found_inf);
//   * the caller skips the optimizer step when found_inf;
//   * update(found_inf): found_inf → S *= backoff_factor and the growth tracker restarts at 0;
//     otherwise the tracker counts the clean step and, when it reaches growth_interval,
//     S *= growth_factor (kept only if the result is finite) and the tracker restarts at 0.
// S is held in float32 like torch's scale tensor.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace tzrec::optim {

struct GradScalerOptions {
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
};

class GradScaler {
 public:
  // Checkpoint keys of state_dict().
  static constexpr const char* kScaleKey = "scale";                   // [] float32
  static constexpr const char* kGrowthTrackerKey = "growth_tracker";  // [] int64

  // Throws tzrec::ConfigError naming train_config.grad_scaler.<field> unless init_scale > 0 and
  // finite, growth_factor > 1 and finite, 0 < backoff_factor < 1 and growth_interval >= 1.
  explicit GradScaler(GradScalerOptions options);

  // loss * S (same dtype and device as loss).
  torch::Tensor scale(const torch::Tensor& loss) const;
  // Multiplies the defined .grad of every parameter by 1/S in place; returns found_inf (any
  // non-finite value among them). Parameters without a gradient are skipped.
  bool unscale(const std::vector<torch::Tensor>& params) const;
  // The scale update after a step (see above).
  void update(bool found_inf);

  double scale_value() const { return scale_; }
  int64_t growth_tracker() const { return growth_tracker_; }
  const GradScalerOptions& options() const { return options_; }

  // {"scale", "growth_tracker"} (copies).
  std::map<std::string, torch::Tensor> state_dict() const;
  // Both keys required, each a one-element tensor with a finite positive scale / a tracker >= 0;
  // otherwise tzrec::CheckpointError naming the key.
  void load_state_dict(const std::map<std::string, torch::Tensor>& state);

 private:
  GradScalerOptions options_;
  float scale_;
  int64_t growth_tracker_ = 0;
};

}  // namespace tzrec::optim
