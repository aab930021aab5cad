#include "embedding/embedding_config.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::embedding {
namespace embedding_config_test {

torch::Tensor init(const std::string& fn, int64_t rows = 500, int64_t dim = 40) {
  torch::manual_seed(3);
  TableConfig t{"tbl", rows, dim, fn, true};
  torch::Tensor w = torch::full({rows, dim}, 123.0f);
  init_table_weight(t, w);
  return w;
}

double min_of(const torch::Tensor& t) { return t.min().item<double>(); }
double max_of(const torch::Tensor& t) { return t.max().item<double>(); }

TEST(InitFn, DefaultIsUniformOverSqrtInverseRows) {
  auto w = init("", 10000, 8);
  double bound = std::sqrt(1.0 / 10000);
  EXPECT_GE(min_of(w), -bound);
  EXPECT_LE(max_of(w), bound);
  EXPECT_LT(min_of(w), -0.95 * bound);
  EXPECT_GT(max_of(w), 0.95 * bound);
}

TEST(InitFn, Uniform) {
  auto w = init("nn.init.uniform_,a=-0.01,b=0.02");
  EXPECT_GE(min_of(w), -0.01);
  EXPECT_LE(max_of(w), 0.02);
  EXPECT_LT(min_of(w), -0.0099);
  EXPECT_GT(max_of(w), 0.0199);
  // Positional arguments and the torch. prefix, as eval(partial(...)) accepts them.
  auto w2 = init("torch.nn.init.uniform_, -0.01, 0.02");
  EXPECT_TRUE(torch::equal(w, w2));
}

TEST(InitFn, NormalMeanAndStd) {
  auto w = init("nn.init.normal_,mean=0.5,std=0.01");
  EXPECT_NEAR(w.mean().item<double>(), 0.5, 5e-4);
  EXPECT_NEAR(w.std().item<double>(), 0.01, 5e-4);
}

TEST(InitFn, TruncNormalStaysInBounds) {
  auto w = init("nn.init.trunc_normal_,std=1.0,a=-0.5,b=0.5");
  EXPECT_GE(min_of(w), -0.5);
  EXPECT_LE(max_of(w), 0.5);
  EXPECT_LT(min_of(w), -0.49);
}

TEST(InitFn, ConstantZerosOnes) {
  EXPECT_TRUE(torch::all(init("nn.init.constant_,val=0.1") == 0.1f).item<bool>());
  EXPECT_TRUE(torch::all(init("nn.init.constant_,0.25") == 0.25f).item<bool>());
  EXPECT_TRUE(torch::all(init("nn.init.zeros_") == 0).item<bool>());
  EXPECT_TRUE(torch::all(init("nn.init.ones_") == 1).item<bool>());
}

TEST(InitFn, XavierAndKaimingBounds) {
  // [rows=500, dim=40]: fan_in = 40, fan_out = 500.
  double xb = 2.0 * std::sqrt(6.0 / 540.0);
  auto x = init("nn.init.xavier_uniform_,gain=2.0");
  EXPECT_LE(max_of(x.abs()), xb);
  EXPECT_GT(max_of(x.abs()), 0.99 * xb);
  auto xn = init("nn.init.xavier_normal_");
  EXPECT_NEAR(xn.std().item<double>(), std::sqrt(2.0 / 540.0), 0.003);
  // kaiming_uniform_ default: a=0, fan_in, leaky_relu → gain sqrt(2), bound = sqrt(6 / fan_in).
  double kb = std::sqrt(6.0 / 40.0);
  auto k = init("nn.init.kaiming_uniform_");
  EXPECT_LE(max_of(k.abs()), kb);
  EXPECT_GT(max_of(k.abs()), 0.99 * kb);
  auto kf = init("nn.init.kaiming_normal_,mode='fan_out',nonlinearity='relu'");
  EXPECT_NEAR(kf.std().item<double>(), std::sqrt(2.0 / 500.0), 0.002);
}

TEST(InitFn, BadStringsNameTheTable) {
  for (const std::string fn :
       {"nn.init.foo_", "uniform_", "nn.init.uniform_,c=1", "nn.init.uniform_,a=x",
        "nn.init.constant_", "nn.init.kaiming_uniform_,mode='fan_mid'", "nn.init.zeros_,1"}) {
    try {
      init(fn);
      FAIL() << "expected ConfigError for " << fn;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("'tbl'"), std::string::npos) << e.what();
    }
  }
}

}  // namespace embedding_config_test
}  // namespace tzrec::embedding
