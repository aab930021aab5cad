#include "train/optimizer_builder.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::train {
namespace optimizer_builder_test {

template <typename Msg>
Msg parse(const std::string& text) {
  Msg m;
  google::protobuf::TextFormat::Parser parser;
  parser.AllowPartialMessage(true);  // like config::load: real configs omit required `lr`
  EXPECT_TRUE(parser.ParseFromString(text, &m)) << text;
  return m;
}

// Python reads proto floats as the float32 value widened to double.
double f32(double v) { return static_cast<double>(static_cast<float>(v)); }

using SparseKind = embedding::FusedOptimizerKind;
using DenseKind = optim::DenseOptimizerOptions::Kind;

TEST(OptimizerBuilder, SparseSgdDefaults) {
  auto o = sparse_optimizer_options(
      parse<protos::SparseOptimizer>("sgd_optimizer {} constant_learning_rate {}"));
  EXPECT_EQ(o.kind, SparseKind::kSgd);
  EXPECT_EQ(o.lr, f32(0.002));
  EXPECT_FALSE(o.gradient_clipping);
  EXPECT_EQ(o.max_gradient, 1.0);
}

TEST(OptimizerBuilder, SparseAdagradAndAdam) {
  auto a = sparse_optimizer_options(parse<protos::SparseOptimizer>(
      "adagrad_optimizer { lr: 0.01 initial_accumulator_value: 0.1 gradient_clipping: true "
      "max_gradient: 0.5 }"));
  EXPECT_EQ(a.kind, SparseKind::kAdagrad);
  EXPECT_EQ(a.lr, f32(0.01));
  EXPECT_EQ(a.initial_accumulator_value, f32(0.1));
  EXPECT_TRUE(a.gradient_clipping);
  EXPECT_EQ(a.max_gradient, 0.5);
  EXPECT_EQ(a.eps, 1e-8);
  auto m = sparse_optimizer_options(parse<protos::SparseOptimizer>(
      "adam_optimizer { lr: 0.001 beta1: 0.8 weight_decay: 0.01 }"));
  EXPECT_EQ(m.kind, SparseKind::kAdam);
  EXPECT_EQ(m.beta1, f32(0.8));
  EXPECT_EQ(m.beta2, f32(0.999));
  EXPECT_EQ(m.weight_decay, f32(0.01));
  EXPECT_EQ(learning_rate(parse<protos::SparseOptimizer>("adam_optimizer { lr: 0.001 }")), f32(0.001));
}

// rho / alpha travel in FBGEMM's beta1 slot (TorchEasyRec's create_sparse_optimizer).
TEST(OptimizerBuilder, SparseAdadeltaAndRmsprop) {
  auto d = sparse_optimizer_options(parse<protos::SparseOptimizer>(
      "adadelta_optimizer { lr: 0.5 rho: 0.8 weight_decay: 0.01 gradient_clipping: true }"));
  EXPECT_EQ(d.kind, SparseKind::kAdadelta);
  EXPECT_EQ(d.lr, f32(0.5));
  EXPECT_EQ(d.beta1, f32(0.8));
  EXPECT_EQ(d.eps, f32(1e-6));
  EXPECT_EQ(d.weight_decay, f32(0.01));
  EXPECT_TRUE(d.gradient_clipping);
  auto r = sparse_optimizer_options(parse<protos::SparseOptimizer>("rmsprop_optimizer { lr: 0.01 }"));
  EXPECT_EQ(r.kind, SparseKind::kRmsprop);
  EXPECT_EQ(r.beta1, f32(0.99));
  EXPECT_EQ(r.eps, f32(1e-8));
}

TEST(OptimizerBuilder, SparseMissing) {
  EXPECT_THROW(sparse_optimizer_options(parse<protos::SparseOptimizer>("constant_learning_rate {}")),
               ConfigError);
}

TEST(OptimizerBuilder, SparseRowwiseLambLarsFamilies) {
  auto r = sparse_optimizer_options(parse<protos::SparseOptimizer>(
      "rowwise_adagrad_optimizer { lr: 0.05 weight_decay: 0.1 weight_decay_mode: DECOUPLE }"));
  EXPECT_EQ(r.kind, SparseKind::kRowwiseAdagrad);
  EXPECT_EQ(r.weight_decay, f32(0.1));
  EXPECT_EQ(r.weight_decay_mode, embedding::WeightDecayMode::kDecouple);
  EXPECT_EQ(sparse_optimizer_options(parse<protos::SparseOptimizer>(
                "rowwise_adagrad_optimizer { weight_decay_mode: L2 }")).weight_decay_mode,
            embedding::WeightDecayMode::kL2);
  auto l = sparse_optimizer_options(parse<protos::SparseOptimizer>(
      "lamb_optimizer { lr: 0.01 beta2: 0.99 weight_decay: 0.02 gradient_clipping: true }"));
  EXPECT_EQ(l.kind, SparseKind::kLamb);
  EXPECT_EQ(l.beta1, f32(0.9));
  EXPECT_EQ(l.beta2, f32(0.99));
  EXPECT_EQ(l.weight_decay, f32(0.02));
  EXPECT_TRUE(l.gradient_clipping);
  EXPECT_EQ(sparse_optimizer_options(parse<protos::SparseOptimizer>("partial_rowwise_adam_optimizer {}")).kind,
            SparseKind::kPartialRowwiseAdam);
  EXPECT_EQ(sparse_optimizer_options(parse<protos::SparseOptimizer>("partial_rowwise_lamb_optimizer {}")).kind,
            SparseKind::kPartialRowwiseLamb);
  auto s = sparse_optimizer_options(parse<protos::SparseOptimizer>(
      "lars_sgd_optimizer { lr: 0.1 momentum: 0.5 weight_decay: 0.001 }"));
  EXPECT_EQ(s.kind, SparseKind::kLarsSgd);
  EXPECT_EQ(s.momentum, f32(0.5));
  EXPECT_EQ(s.weight_decay, f32(0.001));
  EXPECT_THROW(sparse_optimizer_options(parse<protos::SparseOptimizer>(
                   "sgd_optimizer { gradient_clipping: true max_gradient: -1 }")),
               ConfigError);
}

TEST(OptimizerBuilder, DenseOptimizers) {
  auto s = dense_optimizer_options(parse<protos::DenseOptimizer>("sgd_optimizer { lr: 0.1 }"));
  EXPECT_EQ(s.kind, DenseKind::kSgd);
  EXPECT_EQ(s.lr, f32(0.1));
  EXPECT_EQ(s.momentum, f32(0.9));  // tzrec default
  EXPECT_FALSE(s.nesterov);
  auto g = dense_optimizer_options(parse<protos::DenseOptimizer>("adagrad_optimizer { weight_decay: 0.1 }"));
  EXPECT_EQ(g.kind, DenseKind::kAdagrad);
  EXPECT_EQ(g.eps, f32(1e-10));
  EXPECT_EQ(g.weight_decay, f32(0.1));
  auto a = dense_optimizer_options(parse<protos::DenseOptimizer>(
      "adam_optimizer { lr: 0.001 beta2: 0.99 amsgrad: true eps: 1e-6 }"));
  EXPECT_EQ(a.kind, DenseKind::kAdam);
  EXPECT_EQ(a.beta1, f32(0.9));
  EXPECT_EQ(a.beta2, f32(0.99));
  EXPECT_TRUE(a.amsgrad);
  EXPECT_EQ(a.eps, f32(1e-6));
  auto w = dense_optimizer_options(parse<protos::DenseOptimizer>("adamw_optimizer { weight_decay: 0.01 }"));
  EXPECT_EQ(w.kind, DenseKind::kAdamW);
  EXPECT_EQ(w.weight_decay, f32(0.01));  // the config's value, not torch's AdamW default
  EXPECT_EQ(w.eps, f32(1e-8));
  EXPECT_EQ(learning_rate(parse<protos::DenseOptimizer>("adamw_optimizer { lr: 0.003 }")), f32(0.003));
  auto p = dense_optimizer_options(
      parse<protos::PartOptimizer>("regex_pattern: 'mlp.*' adam_optimizer { lr: 0.5 }"),
      "train_config.dense_optimizer.part_optimizers[0]");
  EXPECT_EQ(p.kind, DenseKind::kAdam);
  EXPECT_EQ(p.lr, 0.5);
}

TEST(OptimizerBuilder, DenseAdadeltaAndRmsprop) {
  // Defaults: the schema's (TorchEasyRec passes every field with its declared default to torch:
  // rho 0.95, eps 1e-6 / alpha 0.99, eps 1e-8).
  auto d = dense_optimizer_options(parse<protos::DenseOptimizer>("adadelta_optimizer {}"));
  EXPECT_EQ(d.kind, DenseKind::kAdadelta);
  EXPECT_FLOAT_EQ(d.rho, 0.95);
  EXPECT_EQ(d.eps, 1e-6);
  EXPECT_EQ(d.weight_decay, 0.0);
  d = dense_optimizer_options(parse<protos::DenseOptimizer>(
      "adadelta_optimizer { lr: 1.0 rho: 0.8 eps: 1e-3 weight_decay: 0.1 }"));
  EXPECT_EQ(d.lr, 1.0);
  EXPECT_EQ(d.rho, 0.8);
  EXPECT_EQ(d.eps, 1e-3);
  EXPECT_EQ(d.weight_decay, 0.1);
  auto r = dense_optimizer_options(parse<protos::DenseOptimizer>("rmsprop_optimizer {}"));
  EXPECT_EQ(r.kind, DenseKind::kRmsprop);
  EXPECT_EQ(r.alpha, 0.99);
  EXPECT_EQ(r.eps, 1e-8);
  r = dense_optimizer_options(parse<protos::PartOptimizer>(
                                  "regex_pattern: 'x' rmsprop_optimizer { lr: 0.25 alpha: 0.7 "
                                  "eps: 1e-4 weight_decay: 0.05 }"),
                              "train_config.dense_optimizer.part_optimizers[1]");
  EXPECT_EQ(r.kind, DenseKind::kRmsprop);
  EXPECT_EQ(r.lr, 0.25);
  EXPECT_EQ(r.alpha, 0.7);
  EXPECT_EQ(r.eps, 1e-4);
  EXPECT_EQ(r.weight_decay, 0.05);
  auto pd = dense_optimizer_options(
      parse<protos::PartOptimizer>("regex_pattern: 'x' adadelta_optimizer { rho: 0.5 }"),
      "train_config.dense_optimizer.part_optimizers[0]");
  EXPECT_EQ(pd.kind, DenseKind::kAdadelta);
  EXPECT_EQ(pd.rho, 0.5);
}

TEST(OptimizerBuilder, DenseMissing) {
  try {
    dense_optimizer_options(protos::DenseOptimizer());
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("train_config.dense_optimizer: no optimizer"),
              std::string::npos);
  }
  EXPECT_THROW(dense_optimizer_options(parse<protos::PartOptimizer>("regex_pattern: 'x'"),
                                       "train_config.dense_optimizer.part_optimizers[0]"),
               ConfigError);
}

}  // namespace optimizer_builder_test
}  // namespace tzrec::train
