// Adadelta and RMSprop of optim::DenseOptimizer against torch.optim: RMSprop against libtorch's own
// torch::optim::RMSprop; Adadelta (absent from libtorch 1.13's C++ API) against values computed
// with Python torch 1.13's torch.optim.Adadelta (script in the comment of AdadeltaMatchesPython).
#include <cmath>

#include <gtest/gtest.h>

#include "base/error.h"
#include "optim/dense_optimizer.h"

namespace tzrec::optim {
namespace dense_optimizer_rms_test {

using Kind = DenseOptimizerOptions::Kind;
using NamedParams = std::vector<std::pair<std::string, torch::Tensor>>;

// p0 = [sin(0.7 i + 0.3)] (shape [3]), p1 = [sin(0.7 i + 1.9)] (shape [2, 2]).
NamedParams sine_params() {
  std::vector<float> a, b;
  for (int i = 0; i < 3; ++i) a.push_back(static_cast<float>(std::sin(0.7 * i + 0.3)));
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<float>(std::sin(0.7 * i + 1.9)));
  return {{"a", torch::tensor(a).requires_grad_(true)},
          {"b", torch::tensor(b).reshape({2, 2}).requires_grad_(true)}};
}

// Gradient of parameter j at step k: cos(1.3 i + 0.5 k + j); parameter 1 has none at step 1.
void set_cosine_grads(NamedParams& params, int k) {
  for (size_t j = 0; j < params.size(); ++j) {
    torch::Tensor& p = params[j].second;
    if (j == 1 && k == 1) {
      p.mutable_grad() = torch::Tensor();
      continue;
    }
    std::vector<float> g;
    for (int64_t i = 0; i < p.numel(); ++i) {
      g.push_back(static_cast<float>(std::cos(1.3 * i + 0.5 * k + static_cast<double>(j))));
    }
    p.mutable_grad() = torch::tensor(g).reshape(p.sizes());
  }
}

void expect_values(const torch::Tensor& t, const std::vector<float>& expected, double tol) {
  torch::Tensor flat = t.detach().flatten();
  ASSERT_EQ(flat.numel(), static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(flat[i].item<float>(), expected[i], tol) << "index " << i;
  }
}

struct AdadeltaCase {
  double lr, rho, eps, weight_decay;
  std::vector<float> a, b, b_acc_delta;
};

// Expected values from /usr/bin/python3 (torch 1.13):
//   p = [a, b] as sine_params(); opt = torch.optim.Adadelta(p, lr, rho, eps, weight_decay)
//   for k in range(4): grads as set_cosine_grads(k); opt.step()
TEST(DenseOptimizerRms, AdadeltaMatchesPython) {
  const std::vector<AdadeltaCase> cases = {
      {0.5, 0.8, 1e-3, 0.0,
       {0.195979282f, 0.953912795f, 1.13294291f},
       {0.990038931f, 0.631954968f, -0.137673616f, -0.887759328f},
       {0.00302667823f, 0.00299213361f, 0.00105574902f, 0.0040353951f}},
      {1.0, 0.9, 1e-6, 0.1,
       {0.286711812f, 0.849011421f, 1.00380564f},
       {0.948813856f, 0.525793135f, -0.155695334f, -0.769052029f},
       {2.48319225e-06f, 3.21803145e-06f, 1.15946636e-06f, 4.74476929e-06f}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(fmt::format("lr {} rho {} eps {} wd {}", c.lr, c.rho, c.eps, c.weight_decay));
    NamedParams params = sine_params();
    DenseOptimizerOptions o;
    o.kind = Kind::kAdadelta;
    o.lr = c.lr;
    o.rho = c.rho;
    o.eps = c.eps;
    o.weight_decay = c.weight_decay;
    DenseOptimizer opt(o, params);
    for (int k = 0; k < 4; ++k) {
      set_cosine_grads(params, k);
      opt.step();
    }
    expect_values(params[0].second, c.a, 2e-6);
    expect_values(params[1].second, c.b, 2e-6);
    const auto state = opt.state_dict();
    expect_values(state.at("b.acc_delta"), c.b_acc_delta, 1e-8 + 1e-5 * c.b_acc_delta[0]);
    EXPECT_EQ(state.at("b.step").item<float>(), 3.0f);  // skipped once
    EXPECT_EQ(state.at("a.step").item<float>(), 4.0f);
    EXPECT_EQ(state.count("a.square_avg"), 1u);
  }
}

TEST(DenseOptimizerRms, RmspropMatchesLibtorch) {
  for (double wd : {0.0, 0.05}) {
    for (double alpha : {0.99, 0.7}) {
      SCOPED_TRACE(fmt::format("wd {} alpha {}", wd, alpha));
      NamedParams ours = sine_params(), ref = sine_params();
      DenseOptimizerOptions o;
      o.kind = Kind::kRmsprop;
      o.lr = 0.01;
      o.alpha = alpha;
      o.eps = 1e-4;
      o.weight_decay = wd;
      DenseOptimizer opt(o, ours);
      torch::optim::RMSprop reference(
          std::vector<torch::Tensor>{ref[0].second, ref[1].second},
          torch::optim::RMSpropOptions(0.01).alpha(alpha).eps(1e-4).weight_decay(wd));
      for (int k = 0; k < 5; ++k) {
        if (k == 3) {
          opt.set_lr(0.02);
          reference.param_groups()[0].options().set_lr(0.02);
        }
        set_cosine_grads(ours, k);
        set_cosine_grads(ref, k);
        opt.step();
        reference.step();
        for (size_t j = 0; j < ours.size(); ++j) {
          ASSERT_TRUE(torch::allclose(ours[j].second, ref[j].second, 1e-6, 1e-7))
              << "step " << k << " param " << j;
        }
      }
      EXPECT_FALSE(torch::allclose(ours[0].second, sine_params()[0].second, 1e-3, 1e-3));
      EXPECT_EQ(opt.state_dict().size(), 4u);  // square_avg + step per parameter
    }
  }
}

// alpha / rho actually reach the update: a different value gives different parameters.
TEST(DenseOptimizerRms, AlphaAndRhoMatter) {
  for (Kind kind : {Kind::kAdadelta, Kind::kRmsprop}) {
    std::vector<torch::Tensor> results;
    for (double decay : {0.9, 0.5}) {
      NamedParams params = sine_params();
      DenseOptimizerOptions o;
      o.kind = kind;
      o.lr = 0.1;
      o.rho = decay;
      o.alpha = decay;
      DenseOptimizer opt(o, params);
      for (int k = 0; k < 3; ++k) {
        set_cosine_grads(params, k);
        opt.step();
      }
      results.push_back(params[0].second.detach().clone());
    }
    EXPECT_FALSE(torch::allclose(results[0], results[1], 1e-5, 1e-6)) << static_cast<int>(kind);
  }
}

TEST(DenseOptimizerRms, InvalidDecayIsConfigError) {
  DenseOptimizerOptions o;
  o.kind = Kind::kAdadelta;
  o.rho = 1.5;
  EXPECT_THROW(DenseOptimizer(o, sine_params()), ConfigError);
  o = DenseOptimizerOptions();
  o.kind = Kind::kRmsprop;
  o.alpha = -0.1;
  EXPECT_THROW(DenseOptimizer(o, sine_params()), ConfigError);
}

}  // namespace dense_optimizer_rms_test
}  // namespace tzrec::optim
