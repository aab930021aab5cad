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

embedding::FusedOptimizerOptions sparse_optimizer_options(const protos::SparseOptimizer& config) {
  using Kind = embedding::FusedOptimizerKind;
  const std::string path = "train_config.sparse_optimizer";
  embedding::FusedOptimizerOptions o;
  // Fields every fused optimizer message has.
  auto common = [&o](const auto& c, Kind kind) {
    o.kind = kind;
    o.lr = c.lr();
    o.gradient_clipping = c.gradient_clipping();
    o.max_gradient = c.max_gradient();
  };
  // The Adam / LAMB family: beta1, beta2, weight_decay.
  auto adam_like = [&](const auto& c, Kind kind) {
    common(c, kind);
    o.beta1 = c.beta1();
    o.beta2 = c.beta2();
    o.weight_decay = c.weight_decay();
  };
  switch (config.optimizer_case()) {
    case protos::SparseOptimizer::kSgdOptimizer:
      common(config.sgd_optimizer(), Kind::kSgd);
      break;
    case protos::SparseOptimizer::kAdagradOptimizer:
      common(config.adagrad_optimizer(), Kind::kAdagrad);
      o.initial_accumulator_value = config.adagrad_optimizer().initial_accumulator_value();
      break;
    case protos::SparseOptimizer::kAdamOptimizer:
      adam_like(config.adam_optimizer(), Kind::kAdam);
      break;
    case protos::SparseOptimizer::kLambOptimizer:
      adam_like(config.lamb_optimizer(), Kind::kLamb);
      break;
    case protos::SparseOptimizer::kPartialRowwiseAdamOptimizer:
      adam_like(config.partial_rowwise_adam_optimizer(), Kind::kPartialRowwiseAdam);
      break;
    case protos::SparseOptimizer::kPartialRowwiseLambOptimizer:
      adam_like(config.partial_rowwise_lamb_optimizer(), Kind::kPartialRowwiseLamb);
      break;
    case protos::SparseOptimizer::kLarsSgdOptimizer: {
      const auto& c = config.lars_sgd_optimizer();
      common(c, Kind::kLarsSgd);
      o.momentum = c.momentum();
      o.weight_decay = c.weight_decay();
      break;
    }
    // FBGEMM's argument slots: rho (adadelta) and alpha (rmsprop) travel as beta1.
    case protos::SparseOptimizer::kAdadeltaOptimizer: {
      const auto& c = config.adadelta_optimizer();
      common(c, Kind::kAdadelta);
      o.beta1 = c.rho();
      o.eps = c.eps();
      o.weight_decay = c.weight_decay();
      break;
    }
    case protos::SparseOptimizer::kRmspropOptimizer: {
      const auto& c = config.rmsprop_optimizer();
      common(c, Kind::kRmsprop);
      o.beta1 = c.alpha();
      o.eps = c.eps();
      o.weight_decay = c.weight_decay();
      break;
    }
    case protos::SparseOptimizer::kRowwiseAdagradOptimizer: {
      const auto& c = config.rowwise_adagrad_optimizer();
      common(c, Kind::kRowwiseAdagrad);
      o.weight_decay = c.weight_decay();
      switch (c.weight_decay_mode()) {
        case protos::L2:
          o.weight_decay_mode = embedding::WeightDecayMode::kL2;
          break;
        case protos::DECOUPLE:
          o.weight_decay_mode = embedding::WeightDecayMode::kDecouple;
          break;
        default:
          o.weight_decay_mode = embedding::WeightDecayMode::kNone;
      }
      break;
    }
    case protos::SparseOptimizer::OPTIMIZER_NOT_SET:
      throw ConfigError(path + ": no optimizer is set; add one of sgd_optimizer, "
                               "adagrad_optimizer, adam_optimizer, rowwise_adagrad_optimizer, ...");
    default:
      throw NotSupportedError(path + "." + oneof_entry_name(config, config.optimizer_case()));
  }
  if (o.gradient_clipping && o.max_gradient < 0) {
    throw ConfigError(path + "." + oneof_entry_name(config, config.optimizer_case()) +
                      ".max_gradient: must be >= 0");
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
