#include "optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::optim {
namespace {

constexpr double kPi = 3.141592653589793;  // Python's math.pi

// Linear warmup after t of `size` steps: (end - start) * (t / size) + start.
double linear_warmup(double start, double end, int64_t t, int64_t size) {
  const double scale = static_cast<double>(t) / static_cast<double>(size);
  return (end - start) * scale + start;
}

// min + (base - min) * 0.5 * (1 + cos(pi * position / period)), in Python's evaluation order.
template <typename Int>
double cosine(double base, double min_lr, Int position, Int period) {
  const double angle = kPi * static_cast<double>(position) / static_cast<double>(period);
  const double scale = 0.5 * (1.0 + std::cos(angle));
  return min_lr + (base - min_lr) * scale;
}

class ConstantLr final : public LearningRateSchedule {
 public:
  explicit ConstantLr(double base_lr) : LearningRateSchedule(base_lr, /*by_epoch=*/true) {}
  const char* name() const override { return "ConstantLR"; }

 protected:
  double scheduled(int64_t) const override { return base_lr(); }
};

class ExponentialDecayLr final : public LearningRateSchedule {
 public:
  ExponentialDecayLr(double base_lr, ExponentialDecayLrOptions o)
      : LearningRateSchedule(base_lr, o.by_epoch), o_(o) {}
  const char* name() const override { return "ExponentialDecayLR"; }

 protected:
  double scheduled(int64_t t) const override {
    if (t < o_.warmup_size) return linear_warmup(o_.warmup_learning_rate, base_lr(), t, o_.warmup_size);
    double p = static_cast<double>(t - o_.warmup_size) / static_cast<double>(o_.decay_size);
    if (o_.staircase) p = std::floor(p);
    const double decayed = base_lr() * std::pow(o_.decay_factor, p);
    // Python's max(decayed, min) keeps the first argument unless the second is larger.
    return o_.min_learning_rate > decayed ? o_.min_learning_rate : decayed;
  }

 private:
  ExponentialDecayLrOptions o_;
};

class ManualStepLr final : public LearningRateSchedule {
 public:
  ManualStepLr(double base_lr, ManualStepLrOptions o)
      : LearningRateSchedule(base_lr, o.by_epoch), o_(std::move(o)) {}
  const char* name() const override { return "ManualStepLR"; }

 protected:
  double scheduled(int64_t t) const override {
    // bisect_left: the number of schedule sizes strictly below t.
    const auto passed = std::lower_bound(o_.schedule_sizes.begin(), o_.schedule_sizes.end(), t) -
                        o_.schedule_sizes.begin();
    if (passed > 0) return o_.learning_rates[passed - 1];
    if (o_.warmup) return linear_warmup(base_lr(), o_.learning_rates[0], t, o_.schedule_sizes[0]);
    return base_lr();
  }

 private:
  ManualStepLrOptions o_;
};

class CosineAnnealingLr final : public LearningRateSchedule {
 public:
  CosineAnnealingLr(double base_lr, CosineAnnealingLrOptions o)
      : LearningRateSchedule(base_lr, o.by_epoch), o_(o) {}
  const char* name() const override { return "CosineAnnealingLR"; }

 protected:
  double scheduled(int64_t t) const override {
    if (t < o_.warmup_size) return linear_warmup(o_.warmup_learning_rate, base_lr(), t, o_.warmup_size);
    const int64_t position = std::min(t - o_.warmup_size, o_.t_max);
    return cosine(base_lr(), o_.min_learning_rate, position, o_.t_max);
  }

 private:
  CosineAnnealingLrOptions o_;
};

class CosineAnnealingWarmRestartsLr final : public LearningRateSchedule {
 public:
  CosineAnnealingWarmRestartsLr(double base_lr, CosineAnnealingWarmRestartsLrOptions o)
      : LearningRateSchedule(base_lr, o.by_epoch), o_(o) {}
  const char* name() const override { return "CosineAnnealingWarmRestartsLR"; }

 protected:
  double scheduled(int64_t t) const override {
    if (t < o_.warmup_size) return linear_warmup(o_.warmup_learning_rate, base_lr(), t, o_.warmup_size);
    const int64_t elapsed = t - o_.warmup_size;
    if (o_.t_mult == 1) return cosine(base_lr(), o_.min_learning_rate, elapsed % o_.t_0, o_.t_0);
    // Period index from a floating-point log, exactly as tzrec computes it (math.log(x, T_mult)
    // is log(x) / log(T_mult)); near some restart boundaries it rounds below the integer and the
    // step counts as the last position of the previous period (see lr_schedule_reference.py).
    const double x = static_cast<double>(elapsed) / static_cast<double>(o_.t_0) *
                         static_cast<double>(o_.t_mult - 1) +
                     1.0;
    const auto k = static_cast<int64_t>(std::floor(std::log(x) / std::log(static_cast<double>(o_.t_mult))));
    // 128-bit: T_0 * T_mult^k can exceed int64 for large T_mult long before the step count does.
    __int128 mult_k = 1;
    for (int64_t i = 0; i < k; ++i) mult_k *= o_.t_mult;
    const __int128 period = static_cast<__int128>(o_.t_0) * mult_k;
    const __int128 cycle_start = static_cast<__int128>(o_.t_0) * (mult_k - 1) / (o_.t_mult - 1);
    const __int128 position = static_cast<__int128>(elapsed) - cycle_start;
    return cosine(base_lr(), o_.min_learning_rate, position, period);
  }

 private:
  CosineAnnealingWarmRestartsLrOptions o_;
};

// Collects the first invalid option as a ConfigError "<path>.<field>: <message>".
class Checker {
 public:
  explicit Checker(const std::string& path) : path_(path) {}

  void positive(const char* field, int64_t value) {
    if (value <= 0) fail(field, fmt::format("must be > 0, got {}", value));
  }
  void non_negative(const char* field, int64_t value) {
    if (value < 0) fail(field, fmt::format("must be >= 0, got {}", value));
  }
  void rate(const std::string& field, double value) {
    if (!std::isfinite(value) || value < 0) fail(field, fmt::format("must be a finite value >= 0, got {}", value));
  }
  [[noreturn]] void fail(const std::string& field, const std::string& message) const {
    throw ConfigError(fmt::format("{}.{}: {}", path_, field, message));
  }
  [[noreturn]] void fail_here(const std::string& message) const {
    throw ConfigError(fmt::format("{}: {}", path_, message));
  }

 private:
  const std::string& path_;
};

}  // namespace

double LearningRateSchedule::lr_at(int64_t step_count) const {
  // tzrec: "when base_lr is equal to 0, we freeze lr to 0 instead of using the scheduler lr".
  if (base_lr_ == 0.0) return base_lr_;
  return scheduled(std::max<int64_t>(step_count - 1, 0));
}

std::unique_ptr<LearningRateSchedule> make_lr_schedule(double base_lr,
                                                       const LrScheduleOptions& options,
                                                       const std::string& path) {
  Checker check(path);
  if (!std::isfinite(base_lr) || base_lr < 0) {
    check.fail_here(fmt::format("the optimizer's lr (the base learning rate) must be a finite "
                                "value >= 0, got {}", base_lr));
  }
  if (std::holds_alternative<ConstantLrOptions>(options)) return std::make_unique<ConstantLr>(base_lr);

  if (const auto* o = std::get_if<ExponentialDecayLrOptions>(&options)) {
    check.positive("decay_size", o->decay_size);
    check.rate("decay_factor", o->decay_factor);
    check.rate("warmup_learning_rate", o->warmup_learning_rate);
    check.non_negative("warmup_size", o->warmup_size);
    check.rate("min_learning_rate", o->min_learning_rate);
    return std::make_unique<ExponentialDecayLr>(base_lr, *o);
  }

  if (const auto* o = std::get_if<ManualStepLrOptions>(&options)) {
    if (o->schedule_sizes.size() != o->learning_rates.size()) {
      check.fail_here(fmt::format(
          "schedule_sizes and learning_rates differ in length ({} vs {}); give one learning rate "
          "per schedule size",
          o->schedule_sizes.size(), o->learning_rates.size()));
    }
    for (size_t i = 0; i < o->schedule_sizes.size(); ++i) {
      const std::string field = fmt::format("schedule_sizes[{}]", i);
      check.non_negative(field.c_str(), o->schedule_sizes[i]);
      if (i > 0 && o->schedule_sizes[i] < o->schedule_sizes[i - 1]) {
        check.fail(field, fmt::format("schedule_sizes must be non-decreasing, got {} after {}",
                                      o->schedule_sizes[i], o->schedule_sizes[i - 1]));
      }
      check.rate(fmt::format("learning_rates[{}]", i), o->learning_rates[i]);
    }
    if (o->warmup && (o->schedule_sizes.empty() || o->schedule_sizes[0] <= 0)) {
      check.fail("warmup", "warmup ramps up over [0, schedule_sizes[0]] and needs "
                           "schedule_sizes[0] > 0");
    }
    return std::make_unique<ManualStepLr>(base_lr, *o);
  }

  if (const auto* o = std::get_if<CosineAnnealingLrOptions>(&options)) {
    check.positive("T_max", o->t_max);
    check.rate("min_learning_rate", o->min_learning_rate);
    check.rate("warmup_learning_rate", o->warmup_learning_rate);
    check.non_negative("warmup_size", o->warmup_size);
    return std::make_unique<CosineAnnealingLr>(base_lr, *o);
  }

  const auto& o = std::get<CosineAnnealingWarmRestartsLrOptions>(options);
  check.positive("T_0", o.t_0);
  if (o.t_mult < 1) check.fail("T_mult", fmt::format("must be >= 1, got {}", o.t_mult));
  check.rate("min_learning_rate", o.min_learning_rate);
  check.rate("warmup_learning_rate", o.warmup_learning_rate);
  check.non_negative("warmup_size", o.warmup_size);
  return std::make_unique<CosineAnnealingWarmRestartsLr>(base_lr, o);
}

LrScheduler::LrScheduler(std::unique_ptr<LearningRateSchedule> schedule)
    : schedule_(std::move(schedule)) {
  if (!schedule_) throw std::invalid_argument("LrScheduler needs a schedule");
}

void LrScheduler::set_step_count(int64_t step_count) {
  if (step_count < 1) {
    throw CheckpointError(fmt::format(
        "learning-rate scheduler step count must be >= 1 (torch _step_count), got {}", step_count));
  }
  step_count_ = step_count;
}

}  // namespace tzrec::optim
