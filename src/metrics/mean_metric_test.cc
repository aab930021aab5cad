#include "metrics/mean_metric.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::metrics {
namespace mean_metric_test {

TEST(MeanMetric, BatchLossesWeightedByBatchSize) {
  MeanMetric m;
  m.update(torch::tensor(0.5), torch::tensor(4.0));  // batch of 4 with loss 0.5
  m.update(0.2, 1.0);                               // batch of 1
  EXPECT_NEAR(m.compute(), (0.5 * 4 + 0.2) / 5, 1e-12);
  MeanMetric other;
  other.update(1.0, 5.0);
  m.merge(other);
  EXPECT_NEAR(m.compute(), (0.5 * 4 + 0.2 + 5.0) / 10, 1e-12);
  m.reset();
  EXPECT_TRUE(std::isnan(m.compute()));
}

TEST(MeanMetric, TensorValuesAndNaN) {
  MeanMetric m;
  m.update(torch::tensor({1.0, 2.0, std::numeric_limits<double>::quiet_NaN(), 6.0}));  // NaN dropped
  EXPECT_NEAR(m.compute(), 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(m.total_weight(), 3.0);
  MeanMetric w;
  w.update(torch::tensor({1.0, 3.0}), torch::tensor({3.0, 1.0}));
  EXPECT_NEAR(w.compute(), 1.5, 1e-12);
  EXPECT_THROW(w.update(1.0, -1.0), DataError);
}

}  // namespace mean_metric_test
}  // namespace tzrec::metrics
