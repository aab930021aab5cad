#include "train/lr_scheduler_builder.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "base/error.h"
#include "train/optimizer_builder.h"

namespace tzrec::train {
namespace {

template <typename Msg>
optim::LrScheduleOptions schedule_options(const Msg& config, const std::string& path) {
  switch (config.learning_rate_case()) {
    case Msg::kConstantLearningRate:
      return optim::ConstantLrOptions{};
    case Msg::kExponentialDecayLearningRate: {
      const auto& c = config.exponential_decay_learning_rate();
      optim::ExponentialDecayLrOptions o;
      o.decay_size = c.decay_size();
      o.decay_factor = python_kwarg_float(c.decay_factor());
      o.staircase = c.staircase();
      o.warmup_learning_rate = python_kwarg_float(c.warmup_learning_rate());
      o.warmup_size = c.warmup_size();
      o.min_learning_rate = python_kwarg_float(c.min_learning_rate());
      o.by_epoch = c.by_epoch();
      return o;
    }
    case Msg::kManualStepLearningRate: {
      const auto& c = config.manual_step_learning_rate();
      optim::ManualStepLrOptions o;
      o.schedule_sizes.assign(c.schedule_sizes().begin(), c.schedule_sizes().end());
      for (float lr : c.learning_rates()) o.learning_rates.push_back(python_kwarg_float(lr));
      o.warmup = c.warmup();
      o.by_epoch = c.by_epoch();
      return o;
    }
    case Msg::kCosineAnnealingLearningRate: {
      const auto& c = config.cosine_annealing_learning_rate();
      optim::CosineAnnealingLrOptions o;
      o.t_max = c.t_max();
      o.min_learning_rate = python_kwarg_float(c.min_learning_rate());
      o.warmup_learning_rate = python_kwarg_float(c.warmup_learning_rate());
      o.warmup_size = c.warmup_size();
      o.by_epoch = c.by_epoch();
      return o;
    }
    case Msg::kCosineAnnealingWarmRestartsLearningRate: {
      const auto& c = config.cosine_annealing_warm_restarts_learning_rate();
      optim::CosineAnnealingWarmRestartsLrOptions o;
      o.t_0 = c.t_0();
      o.t_mult = c.t_mult();
      o.min_learning_rate = python_kwarg_float(c.min_learning_rate());
      o.warmup_learning_rate = python_kwarg_float(c.warmup_learning_rate());
      o.warmup_size = c.warmup_size();
      o.by_epoch = c.by_epoch();
      return o;
    }
    case Msg::LEARNING_RATE_NOT_SET:
      break;
  }
  throw ConfigError(path + ": needs a learning_rate, e.g. constant_learning_rate {}");
}

// "<path>.<name of the set learning_rate field>", the path schedule errors start with.
template <typename Msg>
std::string schedule_path(const Msg& config, const std::string& path) {
  const auto* field = config.GetDescriptor()->FindFieldByNumber(config.learning_rate_case());
  return field != nullptr ? path + "." + field->name() : path;
}

template <typename Msg>
optim::LrScheduler build(const Msg& config, double widened_lr, const std::string& path) {
  // optimizer_builder widens the float lr exactly, so the cast recovers the config's float.
  const double base_lr = python_kwarg_float(static_cast<float>(widened_lr));
  return optim::LrScheduler(optim::make_lr_schedule(base_lr, schedule_options(config, path),
                                                    schedule_path(config, path)));
}

}  // namespace

double python_kwarg_float(float value) {
  if (!std::isfinite(value)) return static_cast<double>(value);
  // protobuf's ToShortestFloat: '{:.{p}g}' for p = 6, 7, … until it reads back as the float.
  char buffer[64];
  for (int precision = 6;; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, static_cast<double>(value));
    const double rounded = std::strtod(buffer, nullptr);
    if (static_cast<float>(rounded) == value) return rounded;
  }
}

optim::LrScheduleOptions lr_schedule_options(const protos::SparseOptimizer& config,
                                             const std::string& path) {
  return schedule_options(config, path);
}

optim::LrScheduleOptions lr_schedule_options(const protos::DenseOptimizer& config,
                                             const std::string& path) {
  return schedule_options(config, path);
}

optim::LrScheduleOptions lr_schedule_options(const protos::PartOptimizer& config,
                                             const std::string& path) {
  return schedule_options(config, path);
}

optim::LrScheduler build_lr_scheduler(const protos::SparseOptimizer& config) {
  return build(config, learning_rate(config), "train_config.sparse_optimizer");
}

optim::LrScheduler build_lr_scheduler(const protos::DenseOptimizer& config) {
  return build(config, learning_rate(config), "train_config.dense_optimizer");
}

optim::LrScheduler build_part_lr_scheduler(const protos::DenseOptimizer& dense, int index) {
  if (index < 0 || index >= dense.part_optimizers_size()) {
    throw std::out_of_range(fmt::format("part optimizer index {} of {}", index,
                                        dense.part_optimizers_size()));
  }
  const auto& part = dense.part_optimizers(index);
  const std::string path = fmt::format("train_config.dense_optimizer.part_optimizers[{}]", index);
  const double widened_lr = dense_optimizer_options(part, path).lr;
  if (part.learning_rate_case() != protos::PartOptimizer::LEARNING_RATE_NOT_SET) {
    return build(part, widened_lr, path);
  }
  return build(dense, widened_lr, "train_config.dense_optimizer");
}

optim::GradClippingOptions grad_clipping_options(const protos::TrainConfig& config) {
  using Kind = optim::GradClippingOptions::Kind;
  optim::GradClippingOptions o;
  if (!config.has_grad_clipping()) return o;
  const auto& c = config.grad_clipping();
  const std::string p = "train_config.grad_clipping";
  std::string type = c.clipping_type();
  std::transform(type.begin(), type.end(), type.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
  if (type == "NONE") return o;
  if (type == "NORM") {
    o.kind = Kind::kNorm;
  } else if (type == "VALUE") {
    o.kind = Kind::kValue;
  } else {
    throw ConfigError(fmt::format("{}.clipping_type: must be norm, value or none, got '{}'", p,
                                  c.clipping_type()));
  }
  o.max_gradient = static_cast<double>(c.max_gradient());
  o.norm_type = static_cast<double>(c.norm_type());
  if (!std::isfinite(o.max_gradient) || o.max_gradient < 0) {
    throw ConfigError(fmt::format("{}.max_gradient: must be a finite value >= 0, got {}", p,
                                  o.max_gradient));
  }
  if (o.kind == Kind::kNorm && !(o.norm_type > 0)) {
    throw ConfigError(fmt::format("{}.norm_type: must be > 0 (or inf for the max norm), got {}",
                                  p, o.norm_type));
  }
  return o;
}

optim::GradientAccumulation gradient_accumulation(const protos::TrainConfig& config) {
  return optim::GradientAccumulation(config.gradient_accumulation_steps());
}

}  // namespace tzrec::train
