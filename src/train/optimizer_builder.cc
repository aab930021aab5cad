#include "train/optimizer_builder.h"

#include "base/error.h"
#include "train/lr_scheduler_builder.h"

namespace tzrec::train {
namespace {

// Name of the set oneof field (e.g. "lamb_optimizer") for error messages.
template <typename Msg>
std::string oneof_entry_name(const Msg& config, int field_number) {
  const auto* field = config.GetDescriptor()->FindFieldByNumber(field_number);
  return field != nullptr ? field->name() : std::to_string(field_number);
}

// AdamOptimizer and AdamWOptimizer messages have the same fields.
template <typename AdamMsg>
void set_adam_fields(const AdamMsg& c, optim::DenseOptimizerOptions::Kind kind,
                     optim::DenseOptimizerOptions* o) {
  o->kind = kind;
  o->lr = c.lr();
  o->beta1 = c.beta1();
  o->beta2 = c.beta2();
  o->weight_decay = c.weight_decay();
  o->eps = c.eps();
  o->amsgrad = c.amsgrad();
}

template <typename Msg>
optim::DenseOptimizerOptions dense_options(const Msg& config, const std::string& path) {
  using Kind = optim::DenseOptimizerOptions::Kind;
  optim::DenseOptimizerOptions o;
  // proto floats are widened exactly as Python reads them (float32 value as a double).
  switch (config.optimizer_case()) {
    case Msg::kSgdOptimizer: {
      const auto& c = config.sgd_optimizer();
      o.kind = Kind::kSgd;
      o.lr = c.lr();
      o.momentum = c.momentum();
      o.weight_decay = c.weight_decay();
      o.dampening = c.dampening();
      o.nesterov = c.nesterov();
      break;
    }
    case Msg::kAdagradOptimizer: {
      const auto& c = config.adagrad_optimizer();
      o.kind = Kind::kAdagrad;
      o.lr = c.lr();
      o.weight_decay = c.weight_decay();
      o.initial_accumulator_value = c.initial_accumulator_value();
      o.eps = c.eps();
      break;
    }
    case Msg::kAdamOptimizer:
      set_adam_fields(config.adam_optimizer(), Kind::kAdam, &o);
      break;
    case Msg::kAdamwOptimizer:
      set_adam_fields(config.adamw_optimizer(), Kind::kAdamW, &o);
      break;
    // rho / alpha / eps / weight_decay as config_to_kwargs hands them to torch.optim (0.9f → 0.9).
    case Msg::kAdadeltaOptimizer: {
      const auto& c = config.adadelta_optimizer();
      o.kind = Kind::kAdadelta;
      o.lr = c.lr();
      o.rho = python_kwarg_float(c.rho());
      o.eps = python_kwarg_float(c.eps());
      o.weight_decay = python_kwarg_float(c.weight_decay());
      break;
    }
    case Msg::kRmspropOptimizer: {
      const auto& c = config.rmsprop_optimizer();
      o.kind = Kind::kRmsprop;
      o.lr = c.lr();
      o.alpha = python_kwarg_float(c.alpha());
      o.eps = python_kwarg_float(c.eps());
      o.weight_decay = python_kwarg_float(c.weight_decay());
      break;
    }
    case Msg::OPTIMIZER_NOT_SET:
      throw ConfigError(path + ": no optimizer is set; add one of sgd_optimizer, adagrad_optimizer, "
                               "adam_optimizer, adamw_optimizer, adadelta_optimizer, "
                               "rmsprop_optimizer");
    default:
      throw NotSupportedError(path + "." + oneof_entry_name(config, config.optimizer_case()));
  }
  return o;
}

}  // namespace

embedding::SparseOptimizerOptions sparse_optimizer_options(const protos::SparseOptimizer& config) {
  using Kind = embedding::SparseOptimizerOptions::Kind;
  const std::string path = "train_config.sparse_optimizer";
  embedding::SparseOptimizerOptions o;
  switch (config.optimizer_case()) {
    case protos::SparseOptimizer::kSgdOptimizer: {
      const auto& c = config.sgd_optimizer();
      o.kind = Kind::kSgd;
      o.lr = c.lr();
      o.gradient_clipping = c.gradient_clipping();
      o.max_gradient = c.max_gradient();
      break;
    }
    case protos::SparseOptimizer::kAdagradOptimizer: {
      const auto& c = config.adagrad_optimizer();
      o.kind = Kind::kAdagrad;
      o.lr = c.lr();
      o.gradient_clipping = c.gradient_clipping();
      o.max_gradient = c.max_gradient();
      o.initial_accumulator_value = c.initial_accumulator_value();
      break;
    }
    case protos::SparseOptimizer::kAdamOptimizer: {
      const auto& c = config.adam_optimizer();
      o.kind = Kind::kAdam;
      o.lr = c.lr();
      o.beta1 = c.beta1();
      o.beta2 = c.beta2();
      o.weight_decay = c.weight_decay();
      o.gradient_clipping = c.gradient_clipping();
      o.max_gradient = c.max_gradient();
      break;
    }
    case protos::SparseOptimizer::OPTIMIZER_NOT_SET:
      throw ConfigError(path + ": no optimizer is set; add one of sgd_optimizer, adagrad_optimizer, "
                               "adam_optimizer");
    default:
      throw NotSupportedError(path + "." + oneof_entry_name(config, config.optimizer_case()));
  }
  // FBGEMM's eps (1e-8) is not configurable from tzrec; keep the struct default.
  return o;
}

optim::DenseOptimizerOptions dense_optimizer_options(const protos::DenseOptimizer& config) {
  return dense_options(config, "train_config.dense_optimizer");
}

optim::DenseOptimizerOptions dense_optimizer_options(const protos::PartOptimizer& config,
                                                     const std::string& path) {
  return dense_options(config, path);
}

double learning_rate(const protos::SparseOptimizer& config) {
  return sparse_optimizer_options(config).lr;
}

double learning_rate(const protos::DenseOptimizer& config) {
  return dense_optimizer_options(config).lr;
}

}  // namespace tzrec::train
