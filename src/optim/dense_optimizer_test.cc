#include "optim/dense_optimizer.h"

#include <memory>

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::optim {
namespace dense_optimizer_test {

using Kind = DenseOptimizerOptions::Kind;
using NamedParams = std::vector<std::pair<std::string, torch::Tensor>>;

NamedParams make_params() {
  torch::manual_seed(21);
  return {{"mlp.0.weight", torch::randn({5, 3}).requires_grad_(true)},
          {"mlp.0.bias", torch::randn({3}).requires_grad_(true)},
          {"out.weight", torch::randn({2, 2}).requires_grad_(true)}};
}

NamedParams clone_params(const NamedParams& params) {
  NamedParams out;
  for (const auto& [n, p] : params) out.emplace_back(n, p.detach().clone().requires_grad_(true));
  return out;
}

// Runs 6 steps of ours and libtorch's optimizer on identical gradients. "out.weight" gets no
// gradient on steps 1 and 4 (skipped by both); the lr is halved from step 3 on.
void compare(const DenseOptimizerOptions& options, torch::optim::Optimizer& reference,
             std::vector<torch::Tensor> ref_params, const NamedParams& ours_params) {
  DenseOptimizer ours(options, ours_params);
  const torch::Tensor initial = ours_params[0].second.detach().clone();
  for (int step = 0; step < 6; ++step) {
    if (step == 3) {
      ours.set_lr(options.lr * 0.5);
      reference.param_groups()[0].options().set_lr(options.lr * 0.5);
    }
    torch::manual_seed(1000 + step);
    for (size_t i = 0; i < ref_params.size(); ++i) {
      bool skip = i == 2 && (step == 1 || step == 4);
      torch::Tensor g = torch::randn(ref_params[i].sizes());
      ref_params[i].mutable_grad() = skip ? torch::Tensor() : g.clone();
      ours_params[i].second.mutable_grad() = skip ? torch::Tensor() : g.clone();
    }
    reference.step();
    ours.step();
    for (size_t i = 0; i < ref_params.size(); ++i) {
      ASSERT_TRUE(torch::allclose(ours_params[i].second, ref_params[i], 1e-6, 1e-6))
          << "step " << step << " param " << ours_params[i].first << " max diff "
          << (ours_params[i].second - ref_params[i]).abs().max().item<double>();
    }
  }
  // The updates are not trivially zero.
  EXPECT_FALSE(torch::allclose(ours_params[0].second, initial));
}

std::vector<torch::Tensor> tensors(const NamedParams& params) {
  std::vector<torch::Tensor> out;
  for (const auto& [n, p] : params) out.push_back(p);
  return out;
}

struct SgdCase {
  double momentum, dampening, weight_decay;
  bool nesterov;
};

TEST(DenseOptimizer, SgdMatchesLibtorch) {
  for (const SgdCase& c : std::vector<SgdCase>{{0.0, 0.0, 0.0, false},
                                               {0.9, 0.0, 0.0, false},
                                               {0.9, 0.1, 0.01, false},
                                               {0.8, 0.0, 0.05, true}}) {
    SCOPED_TRACE(fmt::format("momentum {} dampening {} wd {} nesterov {}", c.momentum, c.dampening,
                             c.weight_decay, c.nesterov));
    NamedParams ours = make_params(), ref = clone_params(ours);
    DenseOptimizerOptions o;
    o.kind = Kind::kSgd;
    o.lr = 0.1;
    o.momentum = c.momentum;
    o.dampening = c.dampening;
    o.weight_decay = c.weight_decay;
    o.nesterov = c.nesterov;
    torch::optim::SGD reference(tensors(ref), torch::optim::SGDOptions(o.lr)
                                                  .momentum(c.momentum)
                                                  .dampening(c.dampening)
                                                  .weight_decay(c.weight_decay)
                                                  .nesterov(c.nesterov));
    compare(o, reference, tensors(ref), ours);
  }
}

TEST(DenseOptimizer, AdagradMatchesLibtorch) {
  for (double wd : {0.0, 0.02}) {
    NamedParams ours = make_params(), ref = clone_params(ours);
    DenseOptimizerOptions o;
    o.kind = Kind::kAdagrad;
    o.lr = 0.05;
    o.weight_decay = wd;
    o.lr_decay = 0.01;
    o.initial_accumulator_value = 0.1;
    o.eps = 1e-10;
    torch::optim::Adagrad reference(tensors(ref), torch::optim::AdagradOptions(o.lr)
                                                      .lr_decay(o.lr_decay)
                                                      .weight_decay(wd)
                                                      .initial_accumulator_value(0.1)
                                                      .eps(1e-10));
    compare(o, reference, tensors(ref), ours);
  }
}

TEST(DenseOptimizer, AdamMatchesLibtorch) {
  for (bool amsgrad : {false, true}) {
    for (double wd : {0.0, 0.01}) {
      NamedParams ours = make_params(), ref = clone_params(ours);
      DenseOptimizerOptions o;
      o.kind = Kind::kAdam;
      o.lr = 0.01;
      o.beta1 = 0.8;
      o.beta2 = 0.99;
      o.eps = 1e-8;
      o.weight_decay = wd;
      o.amsgrad = amsgrad;
      torch::optim::Adam reference(tensors(ref), torch::optim::AdamOptions(o.lr)
                                                     .betas({0.8, 0.99})
                                                     .eps(1e-8)
                                                     .weight_decay(wd)
                                                     .amsgrad(amsgrad));
      compare(o, reference, tensors(ref), ours);
    }
  }
}

TEST(DenseOptimizer, AdamWMatchesLibtorch) {
  for (bool amsgrad : {false, true}) {
    NamedParams ours = make_params(), ref = clone_params(ours);
    DenseOptimizerOptions o;
    o.kind = Kind::kAdamW;
    o.lr = 0.01;
    o.weight_decay = 0.1;
    o.amsgrad = amsgrad;
    torch::optim::AdamW reference(tensors(ref), torch::optim::AdamWOptions(o.lr)
                                                    .betas({0.9, 0.999})
                                                    .eps(1e-8)
                                                    .weight_decay(0.1)
                                                    .amsgrad(amsgrad));
    compare(o, reference, tensors(ref), ours);
  }
}

// A parameter large enough that the one-pass Adam step (adam_step.h) splits it over the intra-op
// threads, with a last block shorter than its 64 elements, against libtorch's optimizers.
TEST(DenseOptimizer, AdamOnALargeParameterMatchesLibtorch) {
  const int threads = torch::get_num_threads();
  torch::set_num_threads(2);
  for (bool amsgrad : {false, true}) {
    for (Kind kind : {Kind::kAdam, Kind::kAdamW}) {
      torch::manual_seed(5);
      NamedParams ours = {{"big", torch::randn({301, 701}).requires_grad_(true)}};
      NamedParams ref = clone_params(ours);
      DenseOptimizerOptions o;
      o.kind = kind;
      o.lr = 0.02;
      o.weight_decay = 0.05;
      o.amsgrad = amsgrad;
      std::unique_ptr<torch::optim::Optimizer> reference;
      if (kind == Kind::kAdam) {
        reference = std::make_unique<torch::optim::Adam>(
            tensors(ref), torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay).amsgrad(amsgrad));
      } else {
        reference = std::make_unique<torch::optim::AdamW>(
            tensors(ref), torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay).amsgrad(amsgrad));
      }
      compare(o, *reference, tensors(ref), ours);
    }
  }
  torch::set_num_threads(threads);
}

TEST(DenseOptimizer, HandComputedSgdMomentum) {
  torch::Tensor p = torch::tensor({1.0f}).requires_grad_(true);
  DenseOptimizerOptions o;  // defaults: SGD, momentum 0.9 (tzrec)
  o.lr = 0.1;
  DenseOptimizer opt(o, {{"p", p}});
  p.mutable_grad() = torch::tensor({2.0f});
  opt.step();  // buf = 2, p = 1 - 0.2
  EXPECT_NEAR(p.item<double>(), 0.8, 1e-7);
  p.mutable_grad() = torch::tensor({1.0f});
  opt.step();  // buf = 0.9 * 2 + 1 = 2.8, p = 0.8 - 0.28
  EXPECT_NEAR(p.item<double>(), 0.52, 1e-6);
  opt.zero_grad();
  EXPECT_FALSE(p.grad().defined());
  opt.step();  // no gradient → no update, even with momentum
  EXPECT_NEAR(p.item<double>(), 0.52, 1e-6);
  EXPECT_NEAR(opt.state_dict().at("p.momentum_buffer").item<double>(), 2.8, 1e-6);
}

TEST(DenseOptimizer, StateDictRoundTrip) {
  for (Kind kind : {Kind::kSgd, Kind::kAdagrad, Kind::kAdam, Kind::kAdamW, Kind::kAdadelta,
                    Kind::kRmsprop}) {
    DenseOptimizerOptions o;
    o.kind = kind;
    o.lr = 0.03;
    o.amsgrad = kind == Kind::kAdamW;
    NamedParams a = make_params(), b = clone_params(a);
    DenseOptimizer opt_a(o, a);
    for (int step = 0; step < 3; ++step) {
      for (auto& [n, p] : a) p.mutable_grad() = torch::randn(p.sizes());
      opt_a.step();
    }
    std::map<std::string, torch::Tensor> saved;
    for (const auto& [k, v] : opt_a.state_dict()) saved[k] = v.clone();
    if (kind == Kind::kAdam) {
      EXPECT_EQ(saved.size(), 9u);
      EXPECT_EQ(saved.at("mlp.0.bias.step").item<float>(), 3.0f);
    }
    {
      torch::NoGradGuard ng;
      for (size_t i = 0; i < a.size(); ++i) b[i].second.copy_(a[i].second);
    }
    DenseOptimizer opt_b(o, b);
    opt_b.load_state_dict(saved);
    for (size_t i = 0; i < a.size(); ++i) {
      torch::Tensor g = torch::randn(a[i].second.sizes());
      a[i].second.mutable_grad() = g.clone();
      b[i].second.mutable_grad() = g.clone();
    }
    opt_a.step();
    opt_b.step();
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_TRUE(torch::equal(a[i].second, b[i].second)) << static_cast<int>(kind) << " " << a[i].first;
    }
  }
}

TEST(DenseOptimizer, LoadStateDictErrorsNameTheKey) {
  DenseOptimizerOptions o;
  o.kind = Kind::kAdam;
  NamedParams params = make_params();
  DenseOptimizer opt(o, params);
  auto expect_error = [&](const std::map<std::string, torch::Tensor>& state, const std::string& key) {
    try {
      opt.load_state_dict(state);
      FAIL() << "expected CheckpointError for " << key;
    } catch (const CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find("'" + key + "'"), std::string::npos) << e.what();
    }
  };
  std::map<std::string, torch::Tensor> good = {{"mlp.0.bias.exp_avg", torch::zeros({3})},
                                               {"mlp.0.bias.exp_avg_sq", torch::zeros({3})},
                                               {"mlp.0.bias.step", torch::tensor(2.0f)}};
  opt.load_state_dict(good);
  EXPECT_EQ(opt.state_dict().size(), 3u);
  auto bad_shape = good;
  bad_shape["mlp.0.bias.exp_avg"] = torch::zeros({4});
  expect_error(bad_shape, "mlp.0.bias.exp_avg");
  auto missing = good;
  missing.erase("mlp.0.bias.exp_avg_sq");
  expect_error(missing, "mlp.0.bias.exp_avg_sq");
  auto unknown = good;
  unknown["mlp.1.bias.exp_avg"] = torch::zeros({3});
  expect_error(unknown, "mlp.1.bias.exp_avg");
  auto wrong_slot = good;
  wrong_slot["mlp.0.bias.momentum_buffer"] = torch::zeros({3});
  expect_error(wrong_slot, "mlp.0.bias.momentum_buffer");
}

TEST(DenseOptimizer, InvalidHyperParametersAreConfigErrors) {
  DenseOptimizerOptions o;
  o.nesterov = true;
  o.dampening = 0.1;
  EXPECT_THROW(DenseOptimizer(o, make_params()), ConfigError);
  o = DenseOptimizerOptions();
  o.lr = -1;
  EXPECT_THROW(DenseOptimizer(o, make_params()), ConfigError);
  o = DenseOptimizerOptions();
  o.kind = Kind::kAdam;
  o.beta2 = 1.0;
  EXPECT_THROW(DenseOptimizer(o, make_params()), ConfigError);
}

}  // namespace dense_optimizer_test
}  // namespace tzrec::optim
