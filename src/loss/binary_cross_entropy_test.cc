#include "loss/binary_cross_entropy.h"

#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace tzrec::loss {
namespace binary_cross_entropy_test {

const auto kF64 = torch::TensorOptions().dtype(torch::kFloat64);

// Every case of the shared sklearn reference: log_loss(labels, preds) == BCE on logit(preds).
TEST(BinaryCrossEntropy, MatchesSklearnLogLoss) {
  std::ifstream in(TZREC_SOURCE_DIR "/tests/data/metrics/metric_reference.json");
  ASSERT_TRUE(in.good());
  nlohmann::json ref = nlohmann::json::parse(in);
  ASSERT_GE(ref["cases"].size(), 6u);
  BinaryCrossEntropy bce;
  for (const auto& c : ref["cases"]) {
    auto preds = torch::tensor(c["preds"].get<std::vector<double>>(), kF64);
    auto labels = torch::tensor(c["labels"].get<std::vector<double>>(), kF64);
    auto logits = torch::log(preds / (1 - preds));
    double got = bce(logits, labels).item<double>();
    EXPECT_NEAR(got, c["logloss"].get<double>(), 1e-6) << c["name"];
  }
}

// Hand-checked values, computed with /usr/bin/python3 torch 1.13 nn.BCEWithLogitsLoss:
// logits [0.5, -1, 2, 0], labels [1, 0, 0, 1].
TEST(BinaryCrossEntropy, LabelSmoothing) {
  auto logits = torch::tensor({0.5, -1.0, 2.0, 0.0}, kF64);
  auto labels = torch::tensor({1.0, 0.0, 0.0, 1.0}, kF64);
  BinaryCrossEntropy bce({0.2});  // targets become [0.9, 0.1, 0.1, 0.9]
  EXPECT_NEAR(bce(logits, labels).item<double>(), 0.8893534658253119, 1e-12);
  // Same as plain BCE on the smoothed targets by formula.
  auto t = torch::tensor({0.9, 0.1, 0.1, 0.9}, kF64);
  auto p = torch::sigmoid(logits);
  double by_hand = (-(t * torch::log(p) + (1 - t) * torch::log(1 - p))).mean().item<double>();
  EXPECT_NEAR(bce(logits, labels).item<double>(), by_hand, 1e-12);
}

TEST(BinaryCrossEntropy, SampleWeightsNormalizedByMean) {
  auto logits = torch::tensor({0.5, -1.0, 2.0, 0.0}, kF64);
  auto labels = torch::tensor({1.0, 0.0, 0.0, 1.0}, kF64);
  auto weights = torch::tensor({1.0, 2.0, 0.0, 1.0}, kF64);  // mean 1 → w/mean = w
  EXPECT_NEAR(BinaryCrossEntropy()(logits, labels, weights).item<double>(), 0.4484368849441245, 1e-12);
  EXPECT_NEAR(BinaryCrossEntropy({0.2})(logits, labels, weights).item<double>(), 0.5109368849441245, 1e-12);
  // Scaling all weights does not change the loss.
  EXPECT_NEAR(BinaryCrossEntropy({0.2})(logits, labels, weights * 7.5).item<double>(), 0.5109368849441245,
              1e-12);
  // All-zero weights: 0 / 0 is mapped to 0, so the loss is 0 (tzrec div_no_nan), not NaN.
  EXPECT_EQ(BinaryCrossEntropy()(logits, labels, torch::zeros({4}, kF64)).item<double>(), 0.0);
}

TEST(BinaryCrossEntropy, FloatLabelsAndGradient) {
  auto logits = torch::tensor({0.3f, -0.7f}).requires_grad_(true);
  auto labels = torch::tensor({1.0f, 0.0f});
  auto loss = BinaryCrossEntropy()(logits, labels);
  loss.backward();
  // d/dx mean BCE = (sigmoid(x) - y) / B
  auto want = (torch::sigmoid(logits.detach()) - labels) / 2;
  EXPECT_TRUE(torch::allclose(logits.grad(), want, 1e-6, 1e-6));
}

TEST(BinaryCrossEntropy, BadLabelSmoothing) {
  EXPECT_THROW(BinaryCrossEntropy({1.5}), ConfigError);
  EXPECT_THROW(BinaryCrossEntropy({-0.1}), ConfigError);
}

}  // namespace binary_cross_entropy_test
}  // namespace tzrec::loss
