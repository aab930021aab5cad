// Tests for the metrics' sync(): 3 ranks (Gloo on 127.0.0.1, one process each) update with uneven,
// contiguous slices of one deterministic data set (rank 1 gets no rows); after sync() every rank's
// compute() must equal compute() of one metric updated with all rows in a single process.
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "dist/process_group.h"
#include "dist/testing_multiprocess.h"
#include "metrics/auc.h"
#include "metrics/binary_accuracy.h"
#include "metrics/grouped_auc.h"
#include "metrics/mean_metric.h"
#include "metrics/normalized_entropy.h"
#include "metrics/regression_metrics.h"

namespace tzrec::metrics {
namespace metric_sync_test {

using dist::ProcessGroup;
using dist::testing::expect_all_succeeded;
using dist::testing::run_ranks;

constexpr int kWorld = 3;
constexpr int64_t kRows = 41;

// Rows [begin, end) of rank r: rank 0 gets 26, rank 1 none, rank 2 the last 15.
std::pair<int64_t, int64_t> slice_of(int rank) {
  switch (rank) {
    case 0: return {0, 26};
    case 1: return {26, 26};
    default: return {26, kRows};
  }
}

// The data set: probabilities on a 1/12 grid (many ties), labels 0/1, weights, group ids above 2^53
// (not exact in float64), regression targets.
struct Data {
  torch::Tensor probs;    // [kRows] float32 in [0, 1]
  torch::Tensor labels;   // [kRows] float32 0 / 1
  torch::Tensor weights;  // [kRows] float64 > 0
  torch::Tensor groups;   // [kRows] int64
  torch::Tensor targets;  // [kRows] float64
};

Data make_data() {
  std::vector<float> p, y;
  std::vector<double> w, t;
  std::vector<int64_t> g;
  for (int64_t i = 0; i < kRows; ++i) {
    p.push_back(static_cast<float>((i * 7) % 13) / 12.0F);
    y.push_back(((i * 5) % 3 == 0 || i % 7 == 1) ? 1.0F : 0.0F);
    w.push_back(0.25 + 0.5 * static_cast<double>(i % 4) + 0.01 * static_cast<double>(i));
    g.push_back((int64_t{1} << 60) + (i % 5));
    t.push_back(0.3 * static_cast<double>(i % 7) - 0.1 * static_cast<double>(i % 3));
  }
  return {torch::tensor(p, torch::kFloat32), torch::tensor(y, torch::kFloat32), torch::tensor(w, torch::kFloat64),
          torch::tensor(g, torch::kInt64), torch::tensor(t, torch::kFloat64)};
}

torch::Tensor rows(const torch::Tensor& x, int64_t begin, int64_t end) { return x.slice(0, begin, end); }

// Calls f(begin, end) for the rank's slice in two uneven batches (the first of 3 rows at most).
template <typename F>
void for_batches(int rank, F f) {
  auto [begin, end] = slice_of(rank);
  const int64_t mid = std::min(begin + 3, end);
  f(begin, mid);
  f(mid, end);
}

// The gathered state of every rank equals the single-process state, so exact AUC is bit-equal.
TEST(MetricSync, AucUnweightedAndBinnedExact) {
  auto statuses = run_ranks(kWorld, [](ProcessGroup& pg) {
    const Data d = make_data();
    Auc local(200), all(200);
    for_batches(pg.rank(), [&](int64_t b, int64_t e) { local.update(rows(d.probs, b, e), rows(d.labels, b, e)); });
    all.update(d.probs, d.labels);
    local.sync(pg);
    EXPECT_EQ(local.num_samples(), kRows);
    EXPECT_EQ(local.compute(), all.compute());
    EXPECT_EQ(local.compute_binned(), all.compute_binned());
    EXPECT_GT(all.compute(), 0.0);
  });
  expect_all_succeeded(statuses);
}

// Rank 0 without weights, rank 2 with weights (and the reverse): the unweighted rank's samples
// count with weight 1, as when one process updates with both kinds of batches.
TEST(MetricSync, AucWeightedAndUnweightedRanksMix) {
  auto statuses = run_ranks(kWorld, [](ProcessGroup& pg) {
    const Data d = make_data();
    const auto [begin, end] = slice_of(pg.rank());
    Auc weighted_last, weighted_first, all_last, all_first;
    if (pg.rank() == 2) {
      weighted_last.update(rows(d.probs, begin, end), rows(d.labels, begin, end), rows(d.weights, begin, end));
      weighted_first.update(rows(d.probs, begin, end), rows(d.labels, begin, end));
    } else {
      weighted_last.update(rows(d.probs, begin, end), rows(d.labels, begin, end));
      weighted_first.update(rows(d.probs, begin, end), rows(d.labels, begin, end), rows(d.weights, begin, end));
    }
    all_last.update(rows(d.probs, 0, 26), rows(d.labels, 0, 26));
    all_last.update(rows(d.probs, 26, kRows), rows(d.labels, 26, kRows), rows(d.weights, 26, kRows));
    all_first.update(rows(d.probs, 0, 26), rows(d.labels, 0, 26), rows(d.weights, 0, 26));
    all_first.update(rows(d.probs, 26, kRows), rows(d.labels, 26, kRows));
    weighted_last.sync(pg);
    weighted_first.sync(pg);
    EXPECT_EQ(weighted_last.compute(), all_last.compute());
    EXPECT_EQ(weighted_first.compute(), all_first.compute());
    EXPECT_EQ(weighted_last.compute_binned(), all_last.compute_binned());
    // The weights matter: the weighted AUC differs from the unweighted one on this data.
    Auc unweighted;
    unweighted.update(d.probs, d.labels);
    EXPECT_NE(all_last.compute(), unweighted.compute());
    EXPECT_NE(all_first.compute(), unweighted.compute());
  });
  expect_all_succeeded(statuses);
}

// No rank has a sample: the exchange still works and the result is the degenerate 0.
TEST(MetricSync, AucEveryRankEmpty) {
  auto statuses = run_ranks(kWorld, [](ProcessGroup& pg) {
    Auc auc;
    GroupedAuc gauc;
    auc.sync(pg);
    gauc.sync(pg);
    EXPECT_EQ(auc.num_samples(), 0);
    EXPECT_EQ(auc.compute(), 0.0);
    EXPECT_EQ(auc.compute_binned(), 0.0);
    EXPECT_EQ(gauc.compute(), 0.0);
  });
  expect_all_succeeded(statuses);
}

// Groups are split across ranks (group g has rows on rank 0 and rank 2), so per-rank grouped AUCs
// would differ from the merged one.
TEST(MetricSync, GroupedAucGathersGroupsSplitAcrossRanks) {
  auto statuses = run_ranks(kWorld, [](ProcessGroup& pg) {
    const Data d = make_data();
    GroupedAuc local, all;
    for_batches(pg.rank(), [&](int64_t b, int64_t e) {
      local.update(rows(d.probs, b, e), rows(d.labels, b, e), rows(d.groups, b, e));
    });
    all.update(d.probs, d.labels, d.groups);
    local.sync(pg);
    EXPECT_EQ(local.num_valid_groups(), all.num_valid_groups());
    EXPECT_EQ(all.num_valid_groups(), 5);
    EXPECT_NEAR(local.compute(), all.compute(), 1e-15);
    // Group ids near 2^60 stay distinct: merging groups g and g+1 would change the result.
    GroupedAuc coarse;
    coarse.update(d.probs, d.labels, torch::div(d.groups - (int64_t{1} << 60), 2, "floor"));
    EXPECT_NE(coarse.compute(), all.compute());
  });
  expect_all_succeeded(statuses);
}

TEST(MetricSync, MeanMetricSumsWeightedValues) {
  auto statuses = run_ranks(kWorld, [](ProcessGroup& pg) {
    const Data d = make_data();
    MeanMetric local, all;
    for_batches(pg.rank(), [&](int64_t b, int64_t e) { local.update(rows(d.targets, b, e), rows(d.weights, b, e)); });
    all.update(d.targets, d.weights);
    local.sync(pg);
    EXPECT_NEAR(local.weighted_sum(), all.weighted_sum(), 1e-12);
    EXPECT_NEAR(local.total_weight(), all.total_weight(), 1e-12);
    EXPECT_NEAR(local.compute(), all.compute(), 1e-12);
  });
  expect_all_succeeded(statuses);
}

TEST(MetricSync, AccuracyEntropyAndRegressionSumState) {
  auto statuses = run_ranks(kWorld, [](ProcessGroup& pg) {
    const Data d = make_data();
    BinaryAccuracy acc(0.4), acc_all(0.4);
    NormalizedEntropy ne, ne_all;
    RegressionError mae(RegressionError::Kind::kAbsolute), mae_all(RegressionError::Kind::kAbsolute);
    RegressionError mse(RegressionError::Kind::kSquared), mse_all(RegressionError::Kind::kSquared);
    for_batches(pg.rank(), [&](int64_t b, int64_t e) {
      acc.update(rows(d.probs, b, e), rows(d.labels, b, e));
      ne.update(rows(d.probs, b, e), rows(d.labels, b, e));
      mae.update(rows(d.probs, b, e), rows(d.targets, b, e));
      mse.update(rows(d.probs, b, e), rows(d.targets, b, e));
    });
    acc_all.update(d.probs, d.labels);
    ne_all.update(d.probs, d.labels);
    mae_all.update(d.probs, d.targets);
    mse_all.update(d.probs, d.targets);
    acc.sync(pg);
    ne.sync(pg);
    mae.sync(pg);
    mse.sync(pg);
    EXPECT_EQ(acc.compute(), acc_all.compute());  // integer counts
    EXPECT_NEAR(ne.compute(), ne_all.compute(), 1e-12);
    EXPECT_NEAR(mae.compute(), mae_all.compute(), 1e-12);
    EXPECT_NEAR(mse.compute(), mse_all.compute(), 1e-12);
    EXPECT_EQ(mae.num_samples(), kRows);
    // The local values differ from the merged ones (the test would notice a missing exchange).
    if (pg.rank() == 0) {
      RegressionError mae_local(RegressionError::Kind::kAbsolute);
      mae_local.update(rows(d.probs, 0, 26), rows(d.targets, 0, 26));
      EXPECT_GT(std::abs(mae_local.compute() - mae_all.compute()), 1e-3);
    }
  });
  expect_all_succeeded(statuses);
}

// A second sync() before reset() changes nothing (no collective either); update() after sync() is
// refused; after reset() the metric syncs afresh.
TEST(MetricSync, SecondSyncIsNoOpAndResetStartsOver) {
  auto statuses = run_ranks(kWorld, [](ProcessGroup& pg) {
    const Data d = make_data();
    const auto [begin, end] = slice_of(pg.rank());
    Auc auc, auc_all;
    MeanMetric mean, mean_all;
    BinaryAccuracy acc, acc_all;
    auc.update(rows(d.probs, begin, end), rows(d.labels, begin, end));
    mean.update(rows(d.targets, begin, end));
    acc.update(rows(d.probs, begin, end), rows(d.labels, begin, end));
    auc_all.update(d.probs, d.labels);
    mean_all.update(d.targets);
    acc_all.update(d.probs, d.labels);
    auc.sync(pg);
    mean.sync(pg);
    acc.sync(pg);
    const int64_t collectives = pg.collective_count();
    auc.sync(pg);
    mean.sync(pg);
    acc.sync(pg);
    EXPECT_EQ(pg.collective_count(), collectives);
    EXPECT_EQ(auc.num_samples(), kRows);
    EXPECT_EQ(auc.compute(), auc_all.compute());
    EXPECT_NEAR(mean.compute(), mean_all.compute(), 1e-12);
    EXPECT_NEAR(mean.total_weight(), static_cast<double>(kRows), 1e-12);
    EXPECT_EQ(acc.compute(), acc_all.compute());
    EXPECT_THROW(auc.update(d.probs, d.labels), c10::Error);
    EXPECT_THROW(mean.update(1.0), c10::Error);
    EXPECT_THROW(acc.update(d.probs, d.labels), c10::Error);
    // Next evaluation: every rank contributes its whole slice once more, merged afresh.
    auc.reset();
    mean.reset();
    auc.update(rows(d.probs, begin, end), rows(d.labels, begin, end));
    mean.update(rows(d.targets, begin, end));
    auc.sync(pg);
    mean.sync(pg);
    EXPECT_EQ(auc.num_samples(), kRows);
    EXPECT_EQ(auc.compute(), auc_all.compute());
    EXPECT_NEAR(mean.compute(), mean_all.compute(), 1e-12);
  });
  expect_all_succeeded(statuses);
}

// World size 1: sync() is local and leaves every value unchanged.
TEST(MetricSync, WorldSizeOneChangesNothing) {
  if (dist::testing::is_rank_worker()) return;
  auto pg = ProcessGroup::create(dist::DistEnv{});
  const Data d = make_data();
  Auc auc(50);
  auc.update(rows(d.probs, 0, 20), rows(d.labels, 0, 20));
  auc.update(rows(d.probs, 20, kRows), rows(d.labels, 20, kRows), rows(d.weights, 20, kRows));
  GroupedAuc gauc;
  gauc.update(d.probs, d.labels, d.groups);
  MeanMetric mean;
  mean.update(d.targets, d.weights);
  BinaryAccuracy acc;
  acc.update(d.probs, d.labels);
  NormalizedEntropy ne;
  ne.update(d.probs, d.labels);
  RegressionError mse(RegressionError::Kind::kSquared);
  mse.update(d.probs, d.targets);

  const double before[] = {auc.compute(), auc.compute_binned(), gauc.compute(), mean.compute(),
                           acc.compute(),  ne.compute(),         mse.compute()};
  const int64_t collectives = pg->collective_count();
  auc.sync(*pg);
  gauc.sync(*pg);
  mean.sync(*pg);
  acc.sync(*pg);
  ne.sync(*pg);
  mse.sync(*pg);
  const double after[] = {auc.compute(), auc.compute_binned(), gauc.compute(), mean.compute(),
                          acc.compute(),  ne.compute(),         mse.compute()};
  for (size_t i = 0; i < std::size(before); ++i) EXPECT_EQ(before[i], after[i]) << "value " << i;
  EXPECT_EQ(auc.num_samples(), kRows);
  EXPECT_EQ(mse.num_samples(), kRows);
  EXPECT_NEAR(mean.total_weight(), d.weights.sum().item<double>(), 1e-12);
  EXPECT_EQ(pg->collective_count(), collectives);  // nothing was exchanged
}

}  // namespace metric_sync_test
}  // namespace tzrec::metrics
