// Tests for RecallAtK: hand-computed rows and values from numpy (stable argsort) on a matrix with ties.
#include "metrics/recall_at_k.h"

#include <cmath>

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::metrics {
namespace recall_at_k_test {

TEST(RecallAtK, HandComputedModes) {
  auto sim = torch::tensor({0.9, 0.1, 0.5, 0.2, 0.8, 0.3, 0.1, 0.2, 0.7}, torch::kFloat32).reshape({3, 3});
  RecallAtK diag(1), first(1), first2(2);
  diag.update(sim, RecallTarget::kDiagonal);    // every row's maximum is on the diagonal
  first.update(sim, RecallTarget::kFirstColumn);  // only row 0 ranks column 0 first
  first2.update(sim, RecallTarget::kFirstColumn);  // top-2: row 0 yes, row 1 (0.8, 0.3) no, row 2 (0.7, 0.2) no
  EXPECT_DOUBLE_EQ(diag.compute(), 1.0);
  EXPECT_DOUBLE_EQ(first.compute(), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(first2.compute(), 1.0 / 3.0);
  EXPECT_EQ(first2.num_hits(), 1);
  EXPECT_EQ(first2.num_targets(), 3);
  // Non-square in-batch matrix [2, 4]: targets (0,0) and (1,1).
  RecallAtK d2(2);
  d2.update(torch::tensor({0.1, 0.5, 0.6, 0.0, 0.9, 0.1, 0.2, 0.3}).reshape({2, 4}), RecallTarget::kDiagonal);
  EXPECT_DOUBLE_EQ(d2.compute(), 0.0);
}

// numpy, RandomState(11) after the xauc draws (see xauc_test.cc):
//   s = np.round(rng.rand(6, 5), 1).astype(np.float32); tg = rng.rand(6, 5) < 0.35
//   idx = np.argsort(-s, axis=1, kind="stable")[:, :k]; np.take_along_axis(tg, idx, 1).sum() / tg.sum()
// k=1: 4/11, k=2: 5/11, k=3: 6/11, k=7: 11/11; first column targets: 2/6, 4/6, 5/6, 6/6;
// diagonal (eye(6, 5)) targets: 0/5, 2/5, 3/5, 5/5.
TEST(RecallAtK, MatchesNumpyStableRankingWithTies) {
  auto s = torch::tensor({0.8, 0.1, 0.6, 0.4, 0.9, 0.3, 0.9, 0.2, 0.4, 1.0, 0.6, 0.9, 0.5, 0.2, 0.7,
                          0.5, 0.5, 0.1, 0.1, 0.9, 1.0, 1.0, 0.4, 0.0, 0.6, 0.7, 0.6, 0.1, 0.2, 0.7},
                         torch::kFloat32)
               .reshape({6, 5});
  auto tg = torch::tensor({1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0, 1, 1, 0, 1, 0})
                .reshape({6, 5});
  const int64_t ks[] = {1, 2, 3, 7};
  const int64_t hits[] = {4, 5, 6, 11}, first_hits[] = {2, 4, 5, 6}, diag_hits[] = {0, 2, 3, 5};
  for (int i = 0; i < 4; ++i) {
    RecallAtK r(ks[i]), f(ks[i]), d(ks[i]), half(ks[i]);
    r.update(s, tg);
    f.update(s, RecallTarget::kFirstColumn);
    d.update(s, RecallTarget::kDiagonal);
    EXPECT_DOUBLE_EQ(r.compute(), hits[i] / 11.0) << "k=" << ks[i];
    EXPECT_DOUBLE_EQ(f.compute(), first_hits[i] / 6.0) << "k=" << ks[i];
    EXPECT_DOUBLE_EQ(d.compute(), diag_hits[i] / 5.0) << "k=" << ks[i];
    // Split by rows and merged: same counts.
    RecallAtK other(ks[i]);
    half.update(s.slice(0, 0, 2), tg.slice(0, 0, 2));
    other.update(s.slice(0, 2), tg.slice(0, 2));
    half.merge(other);
    EXPECT_EQ(half.num_hits(), hits[i]);
    EXPECT_EQ(half.num_targets(), 11);
  }
}

TEST(RecallAtK, EdgeCases) {
  RecallAtK r(2);
  EXPECT_TRUE(std::isnan(r.compute()));  // no target seen: 0 / 0
  r.update(torch::zeros({2, 3}), torch::zeros({2, 3}, torch::kBool));
  EXPECT_TRUE(std::isnan(r.compute()));
  // All-equal row: lower column index first → columns 0 and 1.
  r.update(torch::zeros({1, 3}), torch::tensor({false, true, true}).reshape({1, 3}));
  EXPECT_DOUBLE_EQ(r.compute(), 0.5);
  r.reset();
  EXPECT_EQ(r.num_targets(), 0);
  EXPECT_THROW(r.update(torch::tensor({0.1f, NAN}).reshape({1, 2}), RecallTarget::kFirstColumn), DataError);
  EXPECT_THROW(r.update(torch::zeros({2, 3}), torch::zeros({2, 2}, torch::kBool)), UsageError);
  EXPECT_THROW(r.update(torch::zeros({3}), RecallTarget::kDiagonal), UsageError);
  EXPECT_THROW(RecallAtK(0), ConfigError);
}

}  // namespace recall_at_k_test
}  // namespace tzrec::metrics
