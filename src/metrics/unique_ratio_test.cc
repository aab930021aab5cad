// UniqueRatio (the SID models' "unique_sid_ratio") on hand-computed cases: per-batch ratios,
// empty batches skipped, merges, NaN before any update.
#include "metrics/unique_ratio.h"

#include <cmath>

#include <gtest/gtest.h>

namespace tzrec::metrics {
namespace unique_ratio_test {

TEST(UniqueRatio, HandComputed) {
  UniqueRatio m;
  EXPECT_TRUE(std::isnan(m.compute()));
  m.update(torch::tensor({{1, 2}, {1, 2}, {1, 3}, {0, 2}}, torch::kInt64));  // 3 distinct of 4
  m.update(torch::tensor({{5, 5}, {5, 5}}, torch::kInt64));                  // 1 of 2
  m.update(torch::zeros({0, 2}, torch::kInt64));                             // skipped
  EXPECT_DOUBLE_EQ(m.compute(), (0.75 + 0.5) / 2);
  UniqueRatio other;
  other.update(torch::tensor({{7, 1}}, torch::kInt64));
  m.merge(other);
  EXPECT_DOUBLE_EQ(m.compute(), (0.75 + 0.5 + 1.0) / 3);
}

}  // namespace unique_ratio_test
}  // namespace tzrec::metrics
