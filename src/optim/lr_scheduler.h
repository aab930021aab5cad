// Learning-rate schedules of TorchEasyRec (tzrec/optim/lr_scheduler.py,
// docs/tzrec-compatibility.md §2.7) and a stateful scheduler that counts steps exactly like
// torch's LRScheduler.
//
// A schedule maps torch's scheduler step count (`_step_count`, 1 right after construction) to a
// learning rate, with t = max(step_count - 1, 0) scheduler steps taken so far:
//   warmup (t < warmup_size):  (base - warmup_learning_rate) * (t / warmup_size) + warmup_learning_rate
//   constant:                  base
//   exponential decay:         max(base * decay_factor^p, min_learning_rate),
//                              p = (t - warmup_size) / decay_size, floored when staircase
//   manual step:               i = bisect_left(schedule_sizes, t) (number of sizes < t);
//                              i > 0 → learning_rates[i-1]; i == 0 → base, or with warmup
//                              (learning_rates[0] - base) * (t / schedule_sizes[0]) + base
//   cosine annealing:          min + (base - min) * 0.5 * (1 + cos(pi * min(t - warmup, T_max) / T_max))
//   warm restarts:             same cosine over the current period: e = t - warmup; T_mult == 1 →
//                              period T_0, position e % T_0; else k = floor(log(e/T_0*(T_mult-1)+1)
//                              / log(T_mult)) (floating point, as in tzrec), period T_0*T_mult^k,
//                              position e - T_0*(T_mult^k - 1)/(T_mult - 1)
// and a base learning rate of exactly 0 stays 0 whatever the schedule says.
//
// Headers and sources are torch-free. All arithmetic is double, in the same operation order as
// the Python code, so values agree to the last bit on the same libm.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace tzrec::optim {

struct ConstantLrOptions {};

struct ExponentialDecayLrOptions {
  int64_t decay_size = 0;  // > 0
  double decay_factor = 0.95;
  bool staircase = true;
  double warmup_learning_rate = 0.0;
  int64_t warmup_size = 0;
  double min_learning_rate = 0.0;
  bool by_epoch = false;
};

struct ManualStepLrOptions {
  std::vector<int64_t> schedule_sizes;  // non-decreasing; same length as learning_rates
  std::vector<double> learning_rates;
  bool warmup = false;  // needs schedule_sizes[0] > 0
  bool by_epoch = false;
};

struct CosineAnnealingLrOptions {
  int64_t t_max = 0;  // > 0
  double min_learning_rate = 0.0;
  double warmup_learning_rate = 0.0;
  int64_t warmup_size = 0;
  bool by_epoch = false;
};

struct CosineAnnealingWarmRestartsLrOptions {
  int64_t t_0 = 0;     // > 0
  int64_t t_mult = 1;  // >= 1
  double min_learning_rate = 0.0;
  double warmup_learning_rate = 0.0;
  int64_t warmup_size = 0;
  bool by_epoch = false;
};

using LrScheduleOptions =
    std::variant<ConstantLrOptions, ExponentialDecayLrOptions, ManualStepLrOptions,
                 CosineAnnealingLrOptions, CosineAnnealingWarmRestartsLrOptions>;

// Immutable schedule: a pure function of the step count.
class LearningRateSchedule {
 public:
  virtual ~LearningRateSchedule() = default;

  // Learning rate after `step_count` torch scheduler steps (1 = just constructed).
  double lr_at(int64_t step_count) const;
  double base_lr() const { return base_lr_; }
  // by_epoch schedules (and ConstantLR) are stepped at epoch end, the others after every
  // training step.
  bool by_epoch() const { return by_epoch_; }
  // TorchEasyRec's class name, e.g. "ExponentialDecayLR".
  virtual const char* name() const = 0;

 protected:
  LearningRateSchedule(double base_lr, bool by_epoch) : base_lr_(base_lr), by_epoch_(by_epoch) {}
  // The scheduled rate after t >= 0 steps, before the base-lr-0 rule.
  virtual double scheduled(int64_t t) const = 0;

 private:
  double base_lr_;
  bool by_epoch_;
};

// Checks the options and builds the schedule. Invalid options → tzrec::ConfigError whose
// message starts with `path` (the config path of the learning_rate message, e.g.
// "train_config.dense_optimizer.manual_step_learning_rate") and names the field:
//   decay_size / T_max / T_0 must be > 0; T_mult >= 1; decay_factor, learning rates,
//   warmup_learning_rate, min_learning_rate and base_lr >= 0 (and finite);
//   schedule_sizes and learning_rates of equal length, schedule_sizes non-decreasing;
//   warmup needs a first schedule size > 0.
std::unique_ptr<LearningRateSchedule> make_lr_schedule(double base_lr,
                                                       const LrScheduleOptions& options,
                                                       const std::string& path);

// Mirrors torch.optim.lr_scheduler.LRScheduler's counting: construction performs the initial
// step (step_count 1, lr() = schedule at t = 0); each step() adds one. So lr() after k calls of
// step() is what TorchEasyRec's scheduler puts into the optimizer after k steps.
class LrScheduler {
 public:
  explicit LrScheduler(std::unique_ptr<LearningRateSchedule> schedule);

  void step() { ++step_count_; }
  double lr() const { return schedule_->lr_at(step_count_); }
  bool by_epoch() const { return schedule_->by_epoch(); }
  const LearningRateSchedule& schedule() const { return *schedule_; }

  // torch's `_step_count` (>= 1); torch's last_epoch is step_count() - 1. This is the whole
  // state: save it in checkpoints and give it back to set_step_count() on restore.
  int64_t step_count() const { return step_count_; }
  // step_count < 1 → tzrec::CheckpointError (a corrupt or foreign checkpoint value).
  void set_step_count(int64_t step_count);

 private:
  std::unique_ptr<LearningRateSchedule> schedule_;
  int64_t step_count_ = 1;
};

}  // namespace tzrec::optim
