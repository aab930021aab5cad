#include "train/lr_scheduler_builder.h"

#include <cmath>
#include <limits>
#include <vector>

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::train {
namespace lr_scheduler_builder_test {

template <typename Msg>
Msg parse(const std::string& text) {
  Msg m;
  google::protobuf::TextFormat::Parser parser;
  parser.AllowPartialMessage(true);
  EXPECT_TRUE(parser.ParseFromString(text, &m)) << text;
  return m;
}

// lr() after each k in `ks` scheduler steps.
std::vector<double> lrs(optim::LrScheduler s, const std::vector<int64_t>& ks) {
  std::vector<double> out;
  int64_t k = 0;
  for (int64_t target : ks) {
    for (; k < target; ++k) s.step();
    out.push_back(s.lr());
  }
  return out;
}

template <typename Fn>
void expect_config_error(Fn fn, const std::string& text) {
  try {
    fn();
    ADD_FAILURE() << "no error, expected: " << text;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(PythonKwargFloat, ShortestDecimalThatRoundTrips) {
  // Values protobuf's ToShortestFloat gives for these float32 values.
  EXPECT_EQ(python_kwarg_float(0.95f), 0.95);
  EXPECT_EQ(python_kwarg_float(0.1f), 0.1);
  EXPECT_EQ(python_kwarg_float(0.002f), 0.002);
  EXPECT_EQ(python_kwarg_float(1e-7f), 1e-7);
  EXPECT_EQ(python_kwarg_float(65536.0f), 65536.0);
  // 10/3 as float32 is 3.3333332538604736: '%.6g' and '%.7g' do not read back as it, '%.8g' does.
  EXPECT_EQ(python_kwarg_float(10.0f / 3.0f), 3.3333333);
  EXPECT_EQ(python_kwarg_float(0.0f), 0.0);
  EXPECT_NE(python_kwarg_float(0.95f), static_cast<double>(0.95f));
  // Every result reads back as the original float.
  for (float v : {0.123456789f, 1.0f / 7.0f, 3.0e-5f, 123456.789f, std::nextafter(0.1f, 1.0f)}) {
    EXPECT_EQ(static_cast<float>(python_kwarg_float(v)), v) << v;
  }
}

TEST(LrSchedulerBuilder, DenseExponentialDecayMatchesPythonReference) {
  // Same schedule as "exp_staircase_warmup_min" in src/optim/lr_schedule_reference.py: with
  // the floats converted as Python does, the values agree to the last bit (widened float32
  // values would be off by ~1e-8 relative).
  auto s = build_lr_scheduler(parse<protos::DenseOptimizer>(
      "adam_optimizer { lr: 0.01 } exponential_decay_learning_rate { decay_size: 3 "
      "decay_factor: 0.7 warmup_learning_rate: 0.002 warmup_size: 4 min_learning_rate: 0.003 }"));
  EXPECT_FALSE(s.by_epoch());
  EXPECT_STREQ(s.schedule().name(), "ExponentialDecayLR");
  EXPECT_EQ(s.schedule().base_lr(), 0.01);
  const auto v = lrs(std::move(s), {0, 1, 4, 7, 10, 13, 16});
  const std::vector<double> expected = {0.002, 0.004, 0.01, 0.006999999999999999, 0.0049,
                                        0.003429999999999999, 0.003};
  for (size_t i = 0; i < v.size(); ++i) EXPECT_DOUBLE_EQ(v[i], expected[i]) << i;
}

TEST(LrSchedulerBuilder, SparseManualStepWithWarmup) {
  // "manual_warmup" in lr_schedule_reference.py.
  auto s = build_lr_scheduler(parse<protos::SparseOptimizer>(
      "sgd_optimizer { lr: 0.004 } manual_step_learning_rate { schedule_sizes: [2, 4, 8] "
      "learning_rates: [0.008, 0.004, 0.002] warmup: true }"));
  const auto v = lrs(std::move(s), {0, 1, 2, 3, 5, 9});
  const std::vector<double> expected = {0.004, 0.006, 0.008, 0.008, 0.004, 0.002};
  for (size_t i = 0; i < v.size(); ++i) EXPECT_DOUBLE_EQ(v[i], expected[i]) << i;
}

TEST(LrSchedulerBuilder, ConstantIsByEpoch) {
  auto s = build_lr_scheduler(
      parse<protos::SparseOptimizer>("adagrad_optimizer { lr: 0.1 } constant_learning_rate {}"));
  EXPECT_TRUE(s.by_epoch());
  EXPECT_EQ(s.lr(), 0.1);  // the Python float 0.1, not 0.10000000149011612
  s.step();
  EXPECT_EQ(s.lr(), 0.1);
}

TEST(LrSchedulerBuilder, CosineOptionsAreMapped) {
  auto cosine = std::get<optim::CosineAnnealingLrOptions>(lr_schedule_options(
      parse<protos::DenseOptimizer>(
          "sgd_optimizer {} cosine_annealing_learning_rate { T_max: 10 min_learning_rate: 0.001 "
          "warmup_learning_rate: 0.0005 warmup_size: 3 by_epoch: true }")));
  EXPECT_EQ(cosine.t_max, 10);
  EXPECT_EQ(cosine.min_learning_rate, 0.001);
  EXPECT_EQ(cosine.warmup_learning_rate, 0.0005);
  EXPECT_EQ(cosine.warmup_size, 3);
  EXPECT_TRUE(cosine.by_epoch);

  auto restarts = std::get<optim::CosineAnnealingWarmRestartsLrOptions>(lr_schedule_options(
      parse<protos::SparseOptimizer>(
          "sgd_optimizer {} cosine_annealing_warm_restarts_learning_rate { T_0: 3 T_mult: 2 "
          "min_learning_rate: 0.01 warmup_learning_rate: 0.02 warmup_size: 5 }")));
  EXPECT_EQ(restarts.t_0, 3);
  EXPECT_EQ(restarts.t_mult, 2);
  EXPECT_EQ(restarts.min_learning_rate, 0.01);
  EXPECT_EQ(restarts.warmup_learning_rate, 0.02);
  EXPECT_EQ(restarts.warmup_size, 5);
  EXPECT_FALSE(restarts.by_epoch);

  // Proto defaults: decay_factor 0.95, staircase true, T_mult 1.
  auto exp = std::get<optim::ExponentialDecayLrOptions>(lr_schedule_options(
      parse<protos::DenseOptimizer>("exponential_decay_learning_rate { decay_size: 2 }")));
  EXPECT_EQ(exp.decay_factor, 0.95);
  EXPECT_TRUE(exp.staircase);
  auto restarts_default = std::get<optim::CosineAnnealingWarmRestartsLrOptions>(lr_schedule_options(
      parse<protos::DenseOptimizer>("cosine_annealing_warm_restarts_learning_rate { T_0: 2 }")));
  EXPECT_EQ(restarts_default.t_mult, 1);
}

TEST(LrSchedulerBuilder, ErrorsNameTheField) {
  expect_config_error(
      [] {
        build_lr_scheduler(parse<protos::DenseOptimizer>(
            "adam_optimizer {} manual_step_learning_rate { schedule_sizes: [1, 2, 3] "
            "learning_rates: [0.1, 0.2] }"));
      },
      "train_config.dense_optimizer.manual_step_learning_rate: schedule_sizes and "
      "learning_rates differ in length (3 vs 2)");
  expect_config_error(
      [] {
        build_lr_scheduler(parse<protos::SparseOptimizer>(
            "sgd_optimizer {} exponential_decay_learning_rate {}"));
      },
      "train_config.sparse_optimizer.exponential_decay_learning_rate.decay_size: must be > 0, "
      "got 0");
  expect_config_error(
      [] {
        build_lr_scheduler(
            parse<protos::DenseOptimizer>("sgd_optimizer {} cosine_annealing_learning_rate {}"));
      },
      "train_config.dense_optimizer.cosine_annealing_learning_rate.T_max: must be > 0");
  expect_config_error(
      [] {
        build_lr_scheduler(parse<protos::DenseOptimizer>(
            "sgd_optimizer {} cosine_annealing_warm_restarts_learning_rate { T_0: 2 T_mult: 0 }"));
      },
      "train_config.dense_optimizer.cosine_annealing_warm_restarts_learning_rate.T_mult: must "
      "be >= 1");
  expect_config_error(
      [] { build_lr_scheduler(parse<protos::DenseOptimizer>("sgd_optimizer {}")); },
      "train_config.dense_optimizer: needs a learning_rate, e.g. constant_learning_rate {}");
}

TEST(LrSchedulerBuilder, PartOptimizers) {
  const auto dense = parse<protos::DenseOptimizer>(
      "adam_optimizer { lr: 0.01 } exponential_decay_learning_rate { decay_size: 1 "
      "decay_factor: 0.5 } "
      "part_optimizers { regex_pattern: 'a.*' sgd_optimizer { lr: 0.2 } } "
      "part_optimizers { regex_pattern: 'b.*' sgd_optimizer { lr: 0.3 } "
      "  manual_step_learning_rate { schedule_sizes: [1] learning_rates: [0.05] } } "
      "part_optimizers { regex_pattern: 'c.*' sgd_optimizer {} cosine_annealing_learning_rate {} }");
  // No own schedule: the dense one, on the part optimizer's lr.
  auto a = build_part_lr_scheduler(dense, 0);
  EXPECT_STREQ(a.schedule().name(), "ExponentialDecayLR");
  const auto va = lrs(std::move(a), {0, 1, 2});
  EXPECT_EQ(va[0], 0.2);
  EXPECT_EQ(va[1], 0.1);
  EXPECT_EQ(va[2], 0.05);
  // Own schedule.
  const auto vb = lrs(build_part_lr_scheduler(dense, 1), {0, 1, 2});
  EXPECT_EQ(vb[0], 0.3);
  EXPECT_EQ(vb[1], 0.3);
  EXPECT_EQ(vb[2], 0.05);
  expect_config_error([&] { build_part_lr_scheduler(dense, 2); },
                      "train_config.dense_optimizer.part_optimizers[2]."
                      "cosine_annealing_learning_rate.T_max: must be > 0");
}

TEST(GradClippingOptions, FromTrainConfig) {
  using Kind = optim::GradClippingOptions::Kind;
  EXPECT_EQ(grad_clipping_options(parse<protos::TrainConfig>("")).kind, Kind::kNone);
  EXPECT_EQ(grad_clipping_options(parse<protos::TrainConfig>("grad_clipping {}")).kind, Kind::kNone);

  auto norm = grad_clipping_options(parse<protos::TrainConfig>(
      "grad_clipping { clipping_type: 'NORM' max_gradient: 0.1 norm_type: inf }"));
  EXPECT_EQ(norm.kind, Kind::kNorm);
  EXPECT_EQ(norm.max_gradient, static_cast<double>(0.1f));  // widened, as tzrec passes it
  EXPECT_TRUE(std::isinf(norm.norm_type));

  auto defaults = grad_clipping_options(parse<protos::TrainConfig>("grad_clipping { clipping_type: 'norm' }"));
  EXPECT_EQ(defaults.max_gradient, 1.0);
  EXPECT_EQ(defaults.norm_type, 2.0);

  auto value = grad_clipping_options(
      parse<protos::TrainConfig>("grad_clipping { clipping_type: 'Value' max_gradient: 2 }"));
  EXPECT_EQ(value.kind, Kind::kValue);
  EXPECT_EQ(value.max_gradient, 2.0);

  expect_config_error(
      [] { grad_clipping_options(parse<protos::TrainConfig>("grad_clipping { clipping_type: 'l2' }")); },
      "train_config.grad_clipping.clipping_type: must be norm, value or none, got 'l2'");
  expect_config_error(
      [] {
        grad_clipping_options(parse<protos::TrainConfig>(
            "grad_clipping { clipping_type: 'value' max_gradient: -1 }"));
      },
      "train_config.grad_clipping.max_gradient: must be a finite value >= 0, got -1");
  expect_config_error(
      [] {
        grad_clipping_options(parse<protos::TrainConfig>(
            "grad_clipping { clipping_type: 'norm' norm_type: 0 }"));
      },
      "train_config.grad_clipping.norm_type: must be > 0");
}

TEST(GradientAccumulationOptions, FromTrainConfig) {
  EXPECT_FALSE(gradient_accumulation(parse<protos::TrainConfig>("")).enabled());
  EXPECT_FALSE(gradient_accumulation(parse<protos::TrainConfig>("gradient_accumulation_steps: 1")).enabled());
  const auto acc = gradient_accumulation(parse<protos::TrainConfig>("gradient_accumulation_steps: 4"));
  EXPECT_TRUE(acc.enabled());
  EXPECT_EQ(acc.loss_divisor(), 4);
}

}  // namespace lr_scheduler_builder_test
}  // namespace tzrec::train
