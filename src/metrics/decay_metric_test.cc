// Tests for DecayAuc and TrainMetricWrapper against a restatement of TorchEasyRec's DecayAUC /
// TrainMetricWrapper in torch 1.13 (float32 confusion matrices), and hand-computed decays.
#include "metrics/decay_metric.h"

#include <cmath>

#include <gtest/gtest.h>

#include "base/error.h"
#include "metrics/recall_at_k.h"
#include "metrics/regression_metrics.h"

namespace tzrec::metrics {
namespace decay_metric_test {

// rng = np.random.RandomState(3); per batch: y = rng.randint(0, 2, 8);
// p = np.round(np.clip(0.3 * y + 0.7 * rng.rand(8), 0, 1), 2).astype(np.float32)
const std::vector<std::vector<double>> kPreds = {
    {0.63, 0.63, 0.39, 0.45, 0.04, 0.31, 0.02, 0.62}, {0.02, 0.39, 0.48, 0.29, 0.2, 0.49, 0.31, 0.41},
    {0.57, 0.96, 0.98, 0.47, 0.93, 0.59, 0.26, 0.36}, {0.58, 0.63, 0.49, 0.2, 0.62, 0.9, 0.71, 0.5},
    {0.66, 0.06, 0.64, 0.55, 0.8, 0.52, 0.48, 0.78}, {0.23, 0.61, 0.34, 0.47, 0.98, 0.16, 0.48, 0.76},
    {0.05, 0.14, 0.11, 0.37, 0.39, 0.39, 0.13, 0.67}};
const std::vector<std::vector<int64_t>> kLabels = {{0, 0, 1, 1, 0, 0, 0, 1}, {0, 0, 1, 0, 0, 0, 0, 1},
                                                   {1, 1, 1, 0, 1, 0, 0, 1}, {1, 1, 1, 0, 1, 1, 1, 1},
                                                   {1, 0, 1, 1, 1, 0, 0, 1}, {0, 1, 1, 1, 1, 0, 0, 1},
                                                   {0, 0, 0, 1, 1, 0, 0, 0}};

// Reference: tzrec DecayAUC (torchmetrics binned confmat update; decay():
//   confmat = d * confmat + (1 - d) * buffer if any(confmat > 0) else confmat + buffer) driven by
// TrainMetricWrapper.update (decay + compute every decay_step-th step), value after each step:
//   200 thresholds, decay_step 2, rate 0.9: 0, 0.7363636493682861, same, 0.764435350894928, same,
//       0.7829896211624146, same
//   5 thresholds, decay_step 3, rate 0.5: 0, 0, 0.7464285492897034 (x3), 0.841269850730896 (x2)
TEST(TrainMetricWrapper, DecayAucMatchesTzrecSequence) {
  const double expected200[] = {0.0, 0.7363636493682861, 0.7363636493682861, 0.764435350894928,
                                0.764435350894928, 0.7829896211624146, 0.7829896211624146};
  const double expected5[] = {0.0, 0.0, 0.7464285492897034, 0.7464285492897034, 0.7464285492897034,
                              0.841269850730896, 0.841269850730896};
  TrainMetricWrapper a = TrainMetricWrapper::decay_auc(200, 0.9, 2);
  TrainMetricWrapper b = TrainMetricWrapper::decay_auc(5, 0.5, 3);
  for (size_t i = 0; i < kPreds.size(); ++i) {
    auto p = torch::tensor(kPreds[i], torch::kFloat32);
    auto y = torch::tensor(kLabels[i]);
    a.update(p, y);
    b.update(p, y);
    EXPECT_NEAR(a.compute(), expected200[i], 1e-6) << "step " << i + 1;
    EXPECT_NEAR(b.compute(), expected5[i], 1e-6) << "step " << i + 1;
  }
  EXPECT_EQ(a.step_count(), 7);
  a.reset();
  EXPECT_EQ(a.compute(), 0.0);
  EXPECT_EQ(a.step_count(), 0);
}

TEST(DecayAuc, HandComputedDecay) {
  // Two thresholds {0, 1}: the binned ROC has two points, (fpr, tpr) at t=1, then (1, 1) at t=0.
  // Batch 1: preds 1.0 (pos), 0.5 (neg) → at t=1: tp 1 fn 0 fp 0 tn 1 → AUC 1.
  DecayAuc d(2);
  d.update(torch::tensor({1.0f, 0.5f}), torch::tensor({1, 0}));
  EXPECT_EQ(d.compute(), 0.0);  // nothing decayed yet
  d.decay(0.75);               // first decay: state = buffer
  EXPECT_DOUBLE_EQ(d.compute(), 1.0);
  // Batch 2: preds 0.5 (pos), 1.0 (neg) → at t=1: tp 0 fn 1 fp 1 tn 0.
  // Decayed at t=1: tp .75, fn .25, fp .25, tn .75 → tpr .75, fpr .25; AUC = (1 - .25) * (.75 + 1) / 2.
  d.update(torch::tensor({0.5f, 1.0f}), torch::tensor({1, 0}));
  d.decay(0.75);
  EXPECT_DOUBLE_EQ(d.compute(), 0.75 * 1.75 / 2);
  // Logits batch → sigmoid: 3.0 → 0.95, -3.0 → 0.047: both below t=1, so only t=0 counts.
  DecayAuc e(2);
  e.update(torch::tensor({3.0f, -3.0f}), torch::tensor({1, 0}));
  e.decay(0.5);
  EXPECT_DOUBLE_EQ(e.compute(), 0.5);
  EXPECT_THROW(e.update(torch::tensor({NAN}), torch::tensor({1})), DataError);
  EXPECT_THROW(e.update(torch::tensor({0.5f}), torch::tensor({2})), DataError);
  EXPECT_THROW(DecayAuc(1), ConfigError);
}

TEST(TrainMetricWrapper, GenericDecayOfMae) {
  auto mae = std::make_shared<RegressionError>(RegressionError::Kind::kAbsolute);
  TrainMetricWrapper w(make_buffered_metric(mae), 0.5, 2);
  auto step = [&](std::vector<double> err) {
    w.update(torch::tensor(err, torch::kFloat64), torch::zeros({static_cast<int64_t>(err.size())}, torch::kFloat64));
  };
  step({1, 3});
  EXPECT_EQ(w.compute(), 0.0);
  step({2});
  EXPECT_DOUBLE_EQ(w.compute(), 2.0);  // first value as is: (1 + 3 + 2) / 3
  step({4});
  step({7, 7});
  EXPECT_DOUBLE_EQ(w.compute(), 0.5 * 2.0 + 0.5 * 6.0);  // new = (4 + 7 + 7) / 3: metric was reset
  step({100});
  EXPECT_DOUBLE_EQ(w.compute(), 4.0);  // no refresh at step 5
  EXPECT_EQ(mae->num_samples(), 1);
  w.reset();
  EXPECT_EQ(w.compute(), 0.0);
  EXPECT_EQ(mae->num_samples(), 0);
}

TEST(TrainMetricWrapper, NaNRefreshKeepsValueAndConfigErrors) {
  auto recall = std::make_shared<RecallAtK>(1);
  BufferedMetric m{[recall](const torch::Tensor& p, const torch::Tensor&) { recall->update(p, RecallTarget::kFirstColumn); },
                   [recall] { return recall->compute(); }, [recall] { recall->reset(); }};
  TrainMetricWrapper w(m, 0.9, 1);
  w.update(torch::tensor({0.9, 0.1, 0.2, 0.8}).reshape({2, 2}), {});
  EXPECT_DOUBLE_EQ(w.compute(), 0.5);
  w.update(torch::zeros({0, 2}), {});  // no target in the buffer: NaN, dropped
  EXPECT_DOUBLE_EQ(w.compute(), 0.5);
  w.update(torch::tensor({0.9, 0.1}).reshape({1, 2}), {});
  EXPECT_DOUBLE_EQ(w.compute(), 0.9 * 0.5 + 0.1 * 1.0);
  EXPECT_THROW(TrainMetricWrapper(m, 1.5, 1), ConfigError);
  EXPECT_THROW(TrainMetricWrapper(m, 0.9, 0), ConfigError);
  EXPECT_THROW(TrainMetricWrapper::decay_auc(200, -0.1, 10), ConfigError);
  EXPECT_THROW(TrainMetricWrapper(BufferedMetric{}, 0.9, 1), UsageError);
}

}  // namespace decay_metric_test
}  // namespace tzrec::metrics
