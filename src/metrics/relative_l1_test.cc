// RelativeL1 (the SID models' "rel_loss") on hand-computed cases: the symmetric denominator,
// element-weighted aggregation, merges, and NaN before any update.
#include "metrics/relative_l1.h"

#include <cmath>

#include <gtest/gtest.h>

namespace tzrec::metrics {
namespace relative_l1_test {

TEST(RelativeL1, HandComputed) {
  RelativeL1 m;
  EXPECT_TRUE(std::isnan(m.compute()));
  // |t - p| / (max(|t|, |p|) + 1e-4): 1 / 2.0001, 0 / 1.0001, 2 / 1.0001 (symmetric: |p| = 1 > |t|).
  m.update(torch::tensor({{1.0f, 1.0f}}), torch::tensor({{2.0f, 1.0f}}));
  m.update(torch::tensor({{-1.0f}}), torch::tensor({{1.0f}}));
  const double expected = (1 / 2.0001 + 0 / 1.0001 + 2 / 1.0001) / 3;
  EXPECT_NEAR(m.compute(), expected, 1e-6);
  // An exact reconstruction of zeros is 0, not NaN.
  RelativeL1 zeros;
  zeros.update(torch::zeros({2, 3}), torch::zeros({2, 3}));
  EXPECT_EQ(zeros.compute(), 0.0);
  RelativeL1 merged;
  merged.merge(m);
  merged.merge(zeros);
  EXPECT_NEAR(merged.compute(), expected * 3 / 9, 1e-6);  // element-weighted
  m.reset();
  EXPECT_TRUE(std::isnan(m.compute()));
}

}  // namespace relative_l1_test
}  // namespace tzrec::metrics
