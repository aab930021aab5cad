// boundary_bucket against std::upper_bound over the same float32 boundaries (the rule TorchEasyRec's
// FG bucketizes by), on both of its paths (up to 32 boundaries and more): values on, between and
// outside the boundaries, infinities and NaN; and check_boundaries' one-line errors.
#include "feature/boundaries.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "base/error.h"

namespace tzrec::feature {
namespace boundaries_test {

TEST(Boundaries, BucketIsUpperBoundsIndex) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(-100.0f, 100.0f);
  for (size_t size : {0u, 1u, 3u, 31u, 32u, 33u, 100u}) {
    std::vector<float> b(size);
    for (size_t i = 0; i < size; ++i) b[i] = -50.0f + static_cast<float>(i) * 100.0f / static_cast<float>(size);
    std::vector<float> values = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                                 -std::numeric_limits<float>::infinity(), -0.0f, 0.0f};
    for (float x : b) values.insert(values.end(), {x, std::nextafter(x, -1e9f), std::nextafter(x, 1e9f)});
    for (int i = 0; i < 2000; ++i) values.push_back(uniform(rng));
    for (float v : values) {
      const auto want = static_cast<int64_t>(std::upper_bound(b.begin(), b.end(), v) - b.begin());
      ASSERT_EQ(boundary_bucket(b, v), want) << size << " boundaries, value " << v;
    }
  }
  // By hand: [1, 10, 100] -> below 1 / [1, 10) / [10, 100) / from 100; NaN past every boundary.
  const std::vector<float> b = {1, 10, 100};
  EXPECT_EQ(boundary_bucket(b, 0.5f), 0);
  EXPECT_EQ(boundary_bucket(b, 1.0f), 1);
  EXPECT_EQ(boundary_bucket(b, 99.9f), 2);
  EXPECT_EQ(boundary_bucket(b, 100.0f), 3);
  EXPECT_EQ(boundary_bucket(b, std::nanf("")), 3);
}

TEST(Boundaries, CheckNamesTheField) {
  EXPECT_NO_THROW(check_boundaries({}, "x.boundaries"));
  EXPECT_NO_THROW(check_boundaries({-1, 0, 2.5f}, "x.boundaries"));
  try {
    check_boundaries({1, 3, 3}, "feature_configs[2].raw_feature.boundaries");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "feature_configs[2].raw_feature.boundaries: must be strictly increasing (entry 2 is 3)");
  }
  EXPECT_THROW(check_boundaries({1, std::nanf("")}, "x.boundaries"), ConfigError);
}

}  // namespace boundaries_test
}  // namespace tzrec::feature
