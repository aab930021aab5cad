// Tests for RegressionError (MAE / MSE), BinaryAccuracy, NormalizedEntropy and GroupedAuc against
// sklearn values (shared reference file, or constants computed with sklearn 1.2.1 and pasted).
#include <cmath>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "metrics/binary_accuracy.h"
#include "metrics/grouped_auc.h"
#include "metrics/normalized_entropy.h"
#include "metrics/regression_metrics.h"

namespace tzrec::metrics {
namespace rank_metrics_test {

nlohmann::json load_reference() {
  std::ifstream in(TZREC_SOURCE_DIR "/tests/data/metrics/metric_reference.json");
  EXPECT_TRUE(in.good());
  return nlohmann::json::parse(in);
}

torch::Tensor floats(const nlohmann::json& j) { return torch::tensor(j.get<std::vector<double>>(), torch::kFloat32); }
torch::Tensor ints(const nlohmann::json& j) { return torch::tensor(j.get<std::vector<int64_t>>(), torch::kInt64); }

// sklearn mean_absolute_error / mean_squared_error on these values: 1.6951428571428568, 5.194933714285712.
TEST(RegressionError, MatchesSklearnInBatchesAndMerged) {
  auto p = torch::tensor({4.536, 1.301, 2.049, 2.611, 0.817, 2.003, 1.999}, torch::kFloat64);
  auto y = torch::tensor({-0.632, 3.526, 2.901, 1.062, 1.743, 2.758, 1.608}, torch::kFloat64);
  RegressionError mae(RegressionError::Kind::kAbsolute), mse(RegressionError::Kind::kSquared);
  RegressionError mae2(RegressionError::Kind::kAbsolute);
  mae.update(p.slice(0, 0, 3), y.slice(0, 0, 3));
  mae2.update(p.slice(0, 3), y.slice(0, 3));
  mae.merge(mae2);
  mse.update(p.slice(0, 0, 5), y.slice(0, 0, 5));
  mse.update(p.slice(0, 5), y.slice(0, 5));
  EXPECT_NEAR(mae.compute(), 1.6951428571428568, 1e-12);
  EXPECT_NEAR(mse.compute(), 5.1949337142857122, 1e-12);
  EXPECT_EQ(mae.num_samples(), 7);
  mae.reset();
  EXPECT_TRUE(std::isnan(mae.compute()));
  EXPECT_THROW(mse.update(torch::tensor({NAN}), torch::tensor({1.0})), DataError);
}

// sklearn accuracy_score(labels, preds > t): case tzrec_grouped_auc_test t=0.5 → 0.625, t=0.35 → 0.375;
// random_1000 t=0.5 → 0.727.
TEST(BinaryAccuracy, MatchesSklearn) {
  auto ref = load_reference();
  const auto& c0 = ref["cases"][0];
  BinaryAccuracy a(0.5), b(0.35);
  a.update(floats(c0["preds"]), floats(c0["labels"]));
  b.update(floats(c0["preds"]), floats(c0["labels"]));
  EXPECT_DOUBLE_EQ(a.compute(), 0.625);
  EXPECT_DOUBLE_EQ(b.compute(), 0.375);
  const auto& c5 = ref["cases"][5];
  ASSERT_EQ(c5["name"], "random_1000_seed20240601");
  BinaryAccuracy x, y;
  auto p = floats(c5["preds"]);
  auto l = floats(c5["labels"]);
  x.update(p.slice(0, 0, 400), l.slice(0, 0, 400));
  y.update(p.slice(0, 400), l.slice(0, 400));
  x.merge(y);
  EXPECT_DOUBLE_EQ(x.compute(), 0.727);
  // Strict '>' as torchmetrics: a prediction equal to the threshold is negative.
  BinaryAccuracy s(0.5);
  s.update(torch::tensor({0.5f, 0.5f}), torch::tensor({0.0f, 1.0f}));
  EXPECT_DOUBLE_EQ(s.compute(), 0.5);
  // Logits (outside [0, 1]) go through a sigmoid: sigmoid(-2) < 0.5, sigmoid(3) > 0.5.
  BinaryAccuracy lg(0.5);
  lg.update(torch::tensor({-2.0f, 3.0f}), torch::tensor({0.0f, 1.0f}));
  EXPECT_DOUBLE_EQ(lg.compute(), 1.0);
  EXPECT_THROW(BinaryAccuracy(1.5), ConfigError);
  EXPECT_THROW(lg.update(torch::tensor({0.2f}), torch::tensor({2.0f})), DataError);
}

// NE = sklearn log_loss / entropy(mean label); expected values computed with sklearn 1.2.1.
TEST(NormalizedEntropy, MatchesSklearnLogLossOverBaseEntropy) {
  const std::map<std::string, double> expected = {
      {"tzrec_grouped_auc_test", 1.1595270925889525}, {"ties", 1.1609640474436813},
      {"perfect", 0.23696559416620616},               {"inverted", 2.8219280948873622},
      {"all_equal_preds", 1.2853471976424991},        {"random_1000_seed20240601", 0.68612443339435469}};
  auto ref = load_reference();
  for (const auto& c : ref["cases"]) {
    // Float64 predictions: float32 rounding alone moves NE by ~2e-9 on the 1000-row case.
    auto p = torch::tensor(c["preds"].get<std::vector<double>>(), torch::kFloat64);
    auto y = floats(c["labels"]);
    NormalizedEntropy ne, other;
    const int64_t half = p.numel() / 2;
    ne.update(p.slice(0, 0, half), y.slice(0, 0, half));
    other.update(p.slice(0, half), y.slice(0, half));
    ne.merge(other);
    EXPECT_NEAR(ne.compute(), expected.at(c["name"].get<std::string>()), 1e-9) << c["name"];
  }
}

// A constant prediction equal to the base rate has NE 1 (reference's "constant_pred" check); all
// labels equal → base rate clamped by eta instead of log(0).
TEST(NormalizedEntropy, ConstantPredictionAndClamp) {
  auto ref = load_reference();
  NormalizedEntropy ne;
  ne.update(torch::full({8}, 0.25, torch::kFloat64), torch::tensor({1, 0, 0, 0, 1, 0, 0, 0}));
  EXPECT_NEAR(ne.compute(), ref["normalized_entropy_checks"]["constant_pred"].get<double>(), 1e-12);
  NormalizedEntropy all_pos(1e-3);
  all_pos.update(torch::tensor({0.9, 0.8}, torch::kFloat64), torch::tensor({1.0, 1.0}));
  // Σ BCE = -(log .9 + log .8); denominator = -2·log(1 - 1e-3).
  EXPECT_NEAR(all_pos.compute(), (std::log(0.9) + std::log(0.8)) / (2 * std::log1p(-1e-3)), 1e-12);
  EXPECT_THROW(ne.update(torch::tensor({1.5}), torch::tensor({1.0})), DataError);
  EXPECT_THROW(NormalizedEntropy(0.5), ConfigError);
}

// Unweighted mean over groups with both labels (sklearn roc_auc_score per group, reference file).
TEST(GroupedAuc, MatchesReferenceUnweightedMean) {
  auto ref = load_reference();
  int checked = 0;
  for (const auto& c : ref["cases"]) {
    if (!c.contains("groups")) continue;
    auto p = floats(c["preds"]);
    auto y = floats(c["labels"]);
    auto g = ints(c["groups"]);
    GroupedAuc a, b;
    const int64_t split = p.numel() / 3;
    a.update(p.slice(0, 0, split), y.slice(0, 0, split), g.slice(0, 0, split));
    b.update(p.slice(0, split), y.slice(0, split), g.slice(0, split));
    a.merge(b);
    EXPECT_NEAR(a.compute(), c["gauc_unweighted_mean_over_mixed_groups"].get<double>(), 1e-9) << c["name"];
    EXPECT_EQ(a.num_valid_groups(), c["n_groups_used"].get<int64_t>()) << c["name"];
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

// Ties count 1/2 (sklearn case "ties" = 0.5) and a weighted mean would differ from the unweighted one.
TEST(GroupedAuc, TiesAndUnweighted) {
  auto ref = load_reference();
  const auto& ties = ref["cases"][1];
  ASSERT_EQ(ties["name"], "ties");
  GroupedAuc t;
  t.update(floats(ties["preds"]), floats(ties["labels"]), torch::zeros({8}, torch::kInt64));
  EXPECT_NEAR(t.compute(), 0.5, 1e-12);
  // Group 1: 4 rows, AUC 1; group 2: 2 rows, AUC 0 → unweighted 0.5 (size-weighted would be 2/3).
  GroupedAuc u;
  u.update(torch::tensor({0.1f, 0.2f, 0.8f, 0.9f, 0.9f, 0.1f}), torch::tensor({0, 0, 1, 1, 0, 1}),
           torch::tensor({1, 1, 1, 1, 2, 2}));
  EXPECT_NEAR(u.compute(), 0.5, 1e-12);
  GroupedAuc none;
  none.update(torch::tensor({0.1f, 0.2f}), torch::tensor({1, 0}), torch::tensor({1, 2}));
  EXPECT_EQ(none.num_valid_groups(), 0);
  EXPECT_EQ(none.compute(), 0.0);
  EXPECT_THROW(none.update(torch::tensor({0.1f}), torch::tensor({3}), torch::tensor({1})), DataError);
}

}  // namespace rank_metrics_test
}  // namespace tzrec::metrics
