// MulticlassAccuracy values, and sync() of MulticlassAuc, MulticlassAccuracy, XAuc and GroupedXAuc:
// 3 ranks (Gloo on 127.0.0.1, one process each) update with uneven slices of one data set (rank 1
// gets no rows); after sync() every rank's compute() must equal one metric updated with all rows.
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "dist/process_group.h"
#include "dist/testing_multiprocess.h"
#include "metrics/multiclass_accuracy.h"
#include "metrics/multiclass_auc.h"
#include "metrics/xauc.h"

namespace tzrec::metrics {
namespace multiclass_and_xauc_sync_test {

using dist::ProcessGroup;
using dist::testing::expect_all_succeeded;
using dist::testing::run_ranks;

// probs rows of 4 classes; labels [0, 2, 1, 3, 1].
// /usr/bin/python3 sklearn: top_k_accuracy_score(y, p, k=k, labels=[0, 1, 2, 3]) for k = 1, 2, 3 gives
// 0.2, 0.6, 0.6 with
//   p = [[.1,.2,.3,.4],[.5,.1,.3,.1],[.2,.6,.1,.1],[.25,.25,.3,.2],[.4,.35,.15,.1]]
//   y = [0, 2, 1, 3, 1]
TEST(MulticlassAccuracy, TopKAsSklearn) {
  auto p = torch::tensor({0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.1f, 0.3f, 0.1f, 0.2f, 0.6f, 0.1f, 0.1f,
                          0.25f, 0.25f, 0.3f, 0.2f, 0.4f, 0.35f, 0.15f, 0.1f})
               .reshape({5, 4});
  auto y = torch::tensor({0.0f, 2.0f, 1.0f, 3.0f, 1.0f});
  const double expected[] = {0.2, 0.6, 0.6};
  for (int64_t k = 1; k <= 3; ++k) {
    MulticlassAccuracy acc(4, k);
    acc.update(p.slice(0, 0, 2), y.slice(0, 0, 2));
    acc.update(p.slice(0, 2, 5), y.slice(0, 2, 5));
    EXPECT_NEAR(acc.compute(), expected[k - 1], 1e-12) << "k " << k;
  }
  // Logits give the same order, hence the same accuracy.
  MulticlassAccuracy on_logits(4, 2);
  on_logits.update(torch::log(p) * 3.0, y);
  EXPECT_NEAR(on_logits.compute(), 0.6, 1e-12);
  EXPECT_EQ(MulticlassAccuracy(4).compute(), 0.0);
  EXPECT_THROW(MulticlassAccuracy(4, 5), ConfigError);
  EXPECT_THROW(MulticlassAccuracy(4, 0), ConfigError);
  EXPECT_THROW(MulticlassAccuracy(1), ConfigError);
  MulticlassAccuracy acc(4);
  EXPECT_THROW(acc.update(p, torch::tensor({0.0f, 4.0f, 1.0f, 1.0f, 1.0f})), DataError);
  EXPECT_THROW(acc.update(p, torch::tensor({0.0f, 1.5f, 1.0f, 1.0f, 1.0f})), DataError);
  EXPECT_THROW(acc.update(p.slice(1, 0, 3), y), UsageError);
}

constexpr int kWorld = 3;
constexpr int64_t kRows = 37;
constexpr int64_t kClasses = 3;

std::pair<int64_t, int64_t> slice_of(int rank) {
  switch (rank) {
    case 0: return {0, 22};
    case 1: return {22, 22};
    default: return {22, kRows};
  }
}

struct Data {
  torch::Tensor probs;    // [kRows, kClasses] rows summing to 1, many ties
  torch::Tensor labels;   // [kRows] class ids as float32
  torch::Tensor preds;    // [kRows] regression predictions
  torch::Tensor targets;  // [kRows] float64 targets with ties
  torch::Tensor groups;   // [kRows] int64 ids above 2^53
};

Data make_data() {
  std::vector<float> p, y, r;
  std::vector<double> t;
  std::vector<int64_t> g;
  for (int64_t i = 0; i < kRows; ++i) {
    const float a = static_cast<float>((i * 5) % 7), b = static_cast<float>((i * 3) % 4), c = 2.0F;
    const float s = a + b + c;
    p.insert(p.end(), {a / s, b / s, c / s});
    y.push_back(static_cast<float>((i * 7 + i / 3) % kClasses));
    r.push_back(static_cast<float>((i * 11) % 9) * 0.37F - 1.0F);
    t.push_back(0.5 * static_cast<double>((i * 13) % 6) + 1e-9 * static_cast<double>(i % 2));
    g.push_back((int64_t{1} << 58) + (i % 4));
  }
  return {torch::tensor(p).reshape({kRows, kClasses}), torch::tensor(y), torch::tensor(r),
          torch::tensor(t, torch::kFloat64), torch::tensor(g, torch::kInt64)};
}

torch::Tensor rows(const torch::Tensor& x, int64_t begin, int64_t end) { return x.slice(0, begin, end); }

template <typename F>
void for_batches(int rank, F f) {
  auto [begin, end] = slice_of(rank);
  const int64_t mid = std::min(begin + 3, end);
  f(begin, mid);
  f(mid, end);
}

TEST(MetricSyncMore, MulticlassAucAndAccuracy) {
  auto statuses = run_ranks(kWorld, [](ProcessGroup& pg) {
    const Data d = make_data();
    for (AucAverage avg : {AucAverage::kMacro, AucAverage::kWeighted}) {
      for (int64_t thresholds : {int64_t{0}, int64_t{200}}) {
        MulticlassAuc local(kClasses, thresholds, avg), all(kClasses, thresholds, avg);
        for_batches(pg.rank(), [&](int64_t b, int64_t e) { local.update(rows(d.probs, b, e), rows(d.labels, b, e)); });
        all.update(d.probs, d.labels);
        local.sync(pg);
        local.sync(pg);  // second sync: no-op
        EXPECT_EQ(local.num_samples(), kRows);
        EXPECT_NEAR(local.compute(), all.compute(), 1e-12);
        EXPECT_GT(all.compute(), 0.0);
        EXPECT_ANY_THROW(local.update(d.probs, d.labels));
        local.reset();
        EXPECT_EQ(local.num_samples(), 0);
      }
    }
    MulticlassAccuracy local(kClasses, 2), all(kClasses, 2);
    for_batches(pg.rank(), [&](int64_t b, int64_t e) { local.update(rows(d.probs, b, e), rows(d.labels, b, e)); });
    all.update(d.probs, d.labels);
    local.sync(pg);
    EXPECT_EQ(local.num_samples(), kRows);
    EXPECT_EQ(local.compute(), all.compute());
  });
  expect_all_succeeded(statuses);
}

TEST(MetricSyncMore, XAucAndGroupedXAuc) {
  auto statuses = run_ranks(kWorld, [](ProcessGroup& pg) {
    const Data d = make_data();
    XAucOptions exact;
    XAucOptions sampled;
    sampled.max_pairs = 50;  // < n(n-1)/2 = 666 pairs: sampled with the seeded sampler
    sampled.exact_pair_limit = 0;
    XAucOptions in_batch;
    in_batch.in_batch = true;
    for (const XAucOptions& o : {exact, sampled}) {
      XAuc local(o), all(o);
      for_batches(pg.rank(), [&](int64_t b, int64_t e) { local.update(rows(d.preds, b, e), rows(d.targets, b, e)); });
      all.update(d.preds, d.targets);
      local.sync(pg);
      EXPECT_EQ(local.num_samples(), kRows);
      EXPECT_EQ(local.compute(), all.compute());
      EXPECT_EQ(local.compute_exact(), all.compute_exact());
    }
    // in_batch: every rank's per-batch values, rank order; the mean equals one process seeing the
    // same batches (rank 0's two batches, then rank 2's two).
    XAuc local(in_batch), all(in_batch);
    for_batches(pg.rank(), [&](int64_t b, int64_t e) { local.update(rows(d.preds, b, e), rows(d.targets, b, e)); });
    for (int r : {0, 1, 2}) {
      for_batches(r, [&](int64_t b, int64_t e) { all.update(rows(d.preds, b, e), rows(d.targets, b, e)); });
    }
    local.sync(pg);
    EXPECT_NEAR(local.compute(), all.compute(), 1e-15);

    GroupedXAuc glocal(5), gall(5);
    for_batches(pg.rank(), [&](int64_t b, int64_t e) {
      glocal.update(rows(d.preds, b, e), rows(d.targets, b, e), rows(d.groups, b, e));
    });
    gall.update(d.preds, d.targets, d.groups);
    glocal.sync(pg);
    glocal.sync(pg);
    EXPECT_EQ(glocal.num_valid_groups(), 4);
    EXPECT_EQ(glocal.compute(), gall.compute());
    EXPECT_ANY_THROW(glocal.update(d.preds, d.targets, d.groups));
  });
  expect_all_succeeded(statuses);
}

}  // namespace multiclass_and_xauc_sync_test
}  // namespace tzrec::metrics
