// softmax_cross_entropy and jrc_loss against plain row-by-row computations (std::exp / std::log) and
// TorchEasyRec's own unit-test value.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "loss/jrc_loss.h"
#include "loss/softmax_cross_entropy.h"

namespace tzrec::loss {
namespace softmax_and_jrc_loss_test {

using Rows = std::vector<std::vector<double>>;

torch::Tensor to_tensor(const Rows& rows) {
  std::vector<float> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return torch::tensor(flat).reshape({static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())});
}

// −log softmax(row)[c].
double neg_log_softmax(const std::vector<double>& row, size_t c) {
  double sum = 0;
  for (double z : row) sum += std::exp(z);
  return std::log(sum) - row[c];
}

// torch CrossEntropyLoss with label smoothing ls: (1 − ls)·(−log p_y) + ls/C · Σ_c (−log p_c).
double plain_ce(const std::vector<double>& row, size_t y, double ls) {
  double smooth = 0;
  for (size_t c = 0; c < row.size(); ++c) smooth += neg_log_softmax(row, c);
  return (1 - ls) * neg_log_softmax(row, y) + ls / static_cast<double>(row.size()) * smooth;
}

const Rows kLogits3 = {{1.0, 2.0, 0.5}, {0.2, -1.0, 3.0}, {0.0, 0.0, 0.0}, {-2.0, 1.5, 0.3}};
const std::vector<int64_t> kLabels3 = {1, 2, 0, 0};

TEST(SoftmaxCrossEntropy, MatchesPlainComputation) {
  for (double ls : {0.0, 0.1, 1.0}) {
    SoftmaxCrossEntropy loss({ls});
    double mean = 0;
    for (size_t b = 0; b < kLogits3.size(); ++b) mean += plain_ce(kLogits3[b], kLabels3[b], ls) / 4;
    EXPECT_NEAR(loss(to_tensor(kLogits3), torch::tensor(kLabels3)).item<double>(), mean, 1e-6) << "ls " << ls;
  }
}

TEST(SoftmaxCrossEntropy, SampleWeights) {
  SoftmaxCrossEntropy loss({0.2});
  const std::vector<double> w = {1.0, 3.0, 0.0, 2.0};  // mean 1.5
  double expected = 0;
  for (size_t b = 0; b < 4; ++b) expected += plain_ce(kLogits3[b], kLabels3[b], 0.2) * (w[b] / 1.5) / 4;
  auto got = loss(to_tensor(kLogits3), torch::tensor(kLabels3), torch::tensor({1.0f, 3.0f, 0.0f, 2.0f}));
  EXPECT_NEAR(got.item<double>(), expected, 1e-6);
  // All-zero weights: w / mean(w) is 0/0 → 0 (div_no_nan), not NaN.
  EXPECT_EQ(loss(to_tensor(kLogits3), torch::tensor(kLabels3), torch::zeros({4})).item<double>(), 0.0);
}

TEST(SoftmaxCrossEntropy, Gradient) {
  // d CE / d z_c = softmax(z)_c − 1[c = y] (no smoothing), averaged over rows.
  torch::Tensor z = to_tensor(kLogits3).requires_grad_(true);
  SoftmaxCrossEntropy()(z, torch::tensor(kLabels3)).backward();
  for (size_t b = 0; b < 4; ++b) {
    double sum = 0;
    for (double v : kLogits3[b]) sum += std::exp(v);
    for (size_t c = 0; c < 3; ++c) {
      double expected = (std::exp(kLogits3[b][c]) / sum - (static_cast<int64_t>(c) == kLabels3[b] ? 1 : 0)) / 4;
      EXPECT_NEAR(z.grad()[b][c].item<double>(), expected, 1e-6);
    }
  }
}

TEST(SoftmaxCrossEntropy, BadOptionsAndLabels) {
  EXPECT_THROW(SoftmaxCrossEntropy({1.5}), ConfigError);
  EXPECT_THROW(SoftmaxCrossEntropy({-0.1}), ConfigError);
  torch::Tensor ids = class_labels(torch::tensor({0.0f, 2.0f, 1.0f}), 3, "cls");
  EXPECT_EQ(ids.scalar_type(), torch::kInt64);
  EXPECT_TRUE(torch::equal(ids, torch::tensor({0, 2, 1}, torch::kInt64)));
  for (float bad : {3.0f, -1.0f, 0.5f}) {
    try {
      class_labels(torch::tensor({1.0f, bad}), 3, "cls");
      ADD_FAILURE() << bad;
    } catch (const DataError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("label 'cls' row 1"), std::string::npos) << msg;
      EXPECT_NE(msg.find(fmt::format("value {}", static_cast<double>(bad))), std::string::npos) << msg;
      EXPECT_NE(msg.find("[0, 3)"), std::string::npos) << msg;
    }
  }
}

// Plain JRC per row (see jrc_loss.h): alpha · CE + (1 − alpha) · −log(exp(own) / (exp(own) + Σ competitors)).
std::vector<double> plain_jrc(const Rows& z, const std::vector<int64_t>& y, const std::vector<int64_t>& s,
                              double alpha) {
  std::vector<double> out;
  for (size_t b = 0; b < z.size(); ++b) {
    const size_t own_class = y[b] == 1 ? 1 : 0;
    const double own = z[b][own_class];
    double denom = std::exp(own);
    for (size_t j = 0; j < z.size(); ++j) {
      if (s[j] == s[b] && y[j] != y[b]) denom += std::exp(z[j][own_class]);
    }
    const double ge = -std::log(std::exp(own) / denom);
    out.push_back(alpha * neg_log_softmax(z[b], y[b]) + (1 - alpha) * ge);
  }
  return out;
}

// tzrec/loss/jrc_loss_test.py: these logits, labels and sessions give 0.7199 (alpha 0.5).
TEST(JrcLoss, TorchEasyRecUnitTestValue) {
  Rows z = {{0.9, 0.1}, {0.5, 0.5}, {0.3, 0.7}, {0.2, 0.8}, {0.8, 0.2}, {0.55, 0.45}, {0.33, 0.67}, {0.55, 0.45}};
  auto loss = JrcLoss()(to_tensor(z), torch::tensor({0, 0, 1, 1, 0, 0, 1, 1}, torch::kInt64),
                        torch::tensor({1, 1, 1, 1, 2, 2, 2, 2}, torch::kInt8));
  EXPECT_NEAR(loss.item<double>(), 0.7199, 5e-5);
}

struct JrcCase {
  Rows z;
  std::vector<int64_t> y, s;
};

// Sessions interleaved (not contiguous), one session with positives only, one single-row session,
// large session ids.
JrcCase make_case() {
  JrcCase c;
  const int64_t n = 11;
  for (int64_t b = 0; b < n; ++b) {
    c.z.push_back({std::sin(1.7 * b) * 2.0, std::cos(0.9 * b + 0.3) * 3.0});
    c.s.push_back(b == 10 ? (int64_t{1} << 40) : (b % 3 == 2 ? 7 : (b % 2 == 0 ? -4 : 123456789)));
  }
  // session 7: rows 2, 5, 8 all positive; session -4: rows 0, 4, 6; session 123456789: 1, 3, 7, 9.
  c.y = {1, 0, 1, 0, 0, 1, 1, 1, 1, 0, 1};
  return c;
}

TEST(JrcLoss, MatchesPlainLoopWithWeights) {
  const JrcCase c = make_case();
  for (double alpha : {0.5, 0.3, 0.0, 1.0}) {
    const std::vector<double> per_row = plain_jrc(c.z, c.y, c.s, alpha);
    JrcLoss loss({alpha});
    torch::Tensor got_rows = loss.per_sample(to_tensor(c.z), torch::tensor(c.y), torch::tensor(c.s));
    double mean = 0;
    for (size_t b = 0; b < per_row.size(); ++b) {
      EXPECT_NEAR(got_rows[b].item<double>(), per_row[b], 1e-5) << "alpha " << alpha << " row " << b;
      mean += per_row[b] / static_cast<double>(per_row.size());
    }
    EXPECT_NEAR(loss(to_tensor(c.z), torch::tensor(c.y), torch::tensor(c.s)).item<double>(), mean, 1e-5);
    // Weights w_b = b + 1 (mean 6): mean(loss_b · w_b / 6).
    double weighted = 0;
    std::vector<float> w;
    for (size_t b = 0; b < per_row.size(); ++b) {
      w.push_back(static_cast<float>(b + 1));
      weighted += per_row[b] * (static_cast<double>(b + 1) / 6.0) / static_cast<double>(per_row.size());
    }
    EXPECT_NEAR(loss(to_tensor(c.z), torch::tensor(c.y), torch::tensor(c.s), torch::tensor(w)).item<double>(),
                weighted, 1e-5);
  }
  // Session 7 has positives only: their session term is 0, their loss is alpha · CE.
  JrcLoss loss({0.5});
  torch::Tensor rows = loss.per_sample(to_tensor(c.z), torch::tensor(c.y), torch::tensor(c.s));
  EXPECT_NEAR(rows[5].item<double>(), 0.5 * neg_log_softmax(c.z[5], 1), 1e-6);
}

// Gradient against autograd through a row-by-row torch formulation of the same formula.
TEST(JrcLoss, GradientMatchesRowByRowAutograd) {
  const JrcCase c = make_case();
  const double alpha = 0.4;
  torch::Tensor z1 = to_tensor(c.z).to(torch::kFloat64).requires_grad_(true);
  JrcLoss({alpha})(z1, torch::tensor(c.y), torch::tensor(c.s)).backward();

  torch::Tensor z2 = to_tensor(c.z).to(torch::kFloat64).requires_grad_(true);
  std::vector<torch::Tensor> terms;
  for (size_t b = 0; b < c.z.size(); ++b) {
    const int64_t k = c.y[b] == 1 ? 1 : 0;
    std::vector<torch::Tensor> pool = {z2[b][k]};
    for (size_t j = 0; j < c.z.size(); ++j) {
      if (c.s[j] == c.s[b] && c.y[j] != c.y[b]) pool.push_back(z2[j][k]);
    }
    torch::Tensor ge = torch::logsumexp(torch::stack(pool), 0) - z2[b][k];
    torch::Tensor ce = torch::logsumexp(z2[b], 0) - z2[b][c.y[b]];
    terms.push_back(alpha * ce + (1 - alpha) * ge);
  }
  torch::stack(terms).mean().backward();
  EXPECT_TRUE(torch::allclose(z1.grad(), z2.grad(), 1e-7, 1e-9)) << z1.grad() << z2.grad();
}

TEST(JrcLoss, BatchWithOneLabelOnlyIsFinite) {
  // All negatives: every session term is 0, loss = alpha · mean CE (tzrec's earlier form gave NaN).
  Rows z = {{0.1, 0.4}, {1.0, -1.0}, {0.0, 2.0}};
  auto y = torch::tensor({0, 0, 0}, torch::kInt64);
  double ce = (neg_log_softmax(z[0], 0) + neg_log_softmax(z[1], 0) + neg_log_softmax(z[2], 0)) / 3;
  torch::Tensor zt = to_tensor(z).requires_grad_(true);
  auto loss = JrcLoss({0.25})(zt, y, torch::tensor({1, 1, 2}));
  EXPECT_NEAR(loss.item<double>(), 0.25 * ce, 1e-6);
  loss.backward();
  EXPECT_TRUE(torch::isfinite(zt.grad()).all().item<bool>());
  EXPECT_THROW(JrcLoss({1.5}), ConfigError);
}

}  // namespace softmax_and_jrc_loss_test
}  // namespace tzrec::loss

namespace tzrec::loss {
namespace softmax_fused_test {

// The fused node against torch's cross_entropy (its own log_softmax + nll_loss): values and
// gradients, with and without sample weights.
TEST(SoftmaxCrossEntropyFused, MatchesTorchCrossEntropy) {
  torch::manual_seed(4);
  const torch::Tensor x = torch::randn({6, 9}) * 3;
  const torch::Tensor y = torch::tensor({0, 8, 3, 3, 1, 0}, torch::kInt64);
  const torch::Tensor w = torch::tensor({1.0f, 0.5f, 2.0f, 0.0f, 1.0f, 3.0f});
  for (bool weighted : {false, true}) {
    torch::Tensor a = x.clone().requires_grad_(true), b = x.clone().requires_grad_(true);
    torch::Tensor fused = SoftmaxCrossEntropy()(a, y, weighted ? w : torch::Tensor());
    namespace F = torch::nn::functional;
    torch::Tensor ref = weighted ? (F::cross_entropy(b, y, F::CrossEntropyFuncOptions().reduction(torch::kNone)) *
                                    (w / w.mean()))
                                       .mean()
                                 : F::cross_entropy(b, y);
    fused.backward();
    ref.backward();
    EXPECT_NEAR(fused.item<double>(), ref.item<double>(), 1e-6);
    EXPECT_TRUE(torch::allclose(a.grad(), b.grad(), 1e-6, 1e-7)) << a.grad() << b.grad();
  }
}

// A weighted loss (upstream gradient 2.5, not 1) scales the kept gradient; values against torch.
// A label outside the classes is an error, as in torch.
TEST(SoftmaxCrossEntropyFused, ScaledUpstreamGradientAndBadLabels) {
  torch::manual_seed(6);
  const torch::Tensor x = torch::randn({5, 33}) * 2;  // 33 classes: the kernel's vector part and its tail
  const torch::Tensor y = torch::tensor({32, 0, 16, 15, 17}, torch::kInt64);
  torch::Tensor a = x.clone().requires_grad_(true), b = x.clone().requires_grad_(true);
  (SoftmaxCrossEntropy()(a, y) * 2.5).backward();
  (torch::nn::functional::cross_entropy(b, y) * 2.5).backward();
  EXPECT_TRUE(torch::allclose(a.grad(), b.grad(), 1e-6, 1e-7)) << a.grad() << b.grad();
  EXPECT_THROW(SoftmaxCrossEntropy()(x, torch::tensor({0, 1, 33, 0, 0}, torch::kInt64)), c10::Error);
  EXPECT_THROW(SoftmaxCrossEntropy()(x, torch::tensor({0, -1, 3, 0, 0}, torch::kInt64)), c10::Error);
}

// Backward hands over the gradient the node kept (scaled in place unless the upstream gradient is
// 1): a second backward through the same graph (retain_graph) must fail, not reuse it.
TEST(SoftmaxCrossEntropyFused, SecondBackwardFailsInsteadOfReadingTheGradient) {
  torch::manual_seed(5);
  torch::Tensor x = (torch::randn({4, 7}) * 2).requires_grad_(true);
  const torch::Tensor y = torch::tensor({0, 6, 2, 2}, torch::kInt64);
  torch::Tensor loss = SoftmaxCrossEntropy()(x, y);
  loss.backward({}, /*retain_graph=*/true);
  EXPECT_THROW(loss.backward(), c10::Error);
}

}  // namespace softmax_fused_test
}  // namespace tzrec::loss
