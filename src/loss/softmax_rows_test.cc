// The row softmax kernel against the same math in double precision (std::exp / std::log), and
// its edge cases against what torch's log_softmax gives for them (-inf entries: probability 0;
// NaN or only -inf in a row: NaN).
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "loss/softmax_rows.h"

namespace tzrec::loss {
namespace softmax_rows_test {

constexpr double kRelTol = 1.0 / (1 << 22);

TEST(SoftmaxRows, ExpMatchesStdExpOnItsRange) {
  // Every 1/1024 of [-87, 0] and some odd points: relative error below 2^-22.
  double worst = 0;
  for (int i = 0; i <= 87 * 1024; ++i) {
    const float x = -static_cast<float>(i) / 1024.0f;
    const double want = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::abs(exp_nonpositive(x) - want) / want);
  }
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-87.0f, 0.0f);
  for (int i = 0; i < 100000; ++i) {
    const float x = u(gen);
    const double want = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::abs(exp_nonpositive(x) - want) / want);
  }
  EXPECT_LT(worst, kRelTol);
  EXPECT_EQ(exp_nonpositive(0.0f), 1.0f);
  EXPECT_EQ(exp_nonpositive(-0.0f), 1.0f);
}

TEST(SoftmaxRows, ExpBelowTheRangeIsZeroAndNanStaysNan) {
  EXPECT_EQ(exp_nonpositive(-87.5f), 0.0f);
  EXPECT_EQ(exp_nonpositive(-1e30f), 0.0f);
  EXPECT_EQ(exp_nonpositive(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_TRUE(std::isnan(exp_nonpositive(std::numeric_limits<float>::quiet_NaN())));
}

// softmax and log-sum-exp of a row in double, from the float differences x − max (torch's
// log_softmax subtracts the maximum in float too; that rounding is not the kernel's error).
void reference(const std::vector<float>& row, std::vector<double>& p, double& lse) {
  float m = -std::numeric_limits<float>::infinity();
  for (float v : row) m = std::max(m, v);
  double sum = 0;
  for (float v : row) sum += std::exp(static_cast<double>(v - m));
  p.resize(row.size());
  for (size_t j = 0; j < row.size(); ++j) p[j] = std::exp(static_cast<double>(row[j] - m)) / sum;
  lse = std::log(sum) + m;
}

TEST(SoftmaxRows, RowsOfEveryLengthMatchDoublePrecision) {
  std::mt19937 gen(11);
  for (int64_t n : {1, 2, 15, 16, 17, 31, 33, 100, 1025}) {
    for (float spread : {0.1f, 5.0f, 60.0f}) {  // 60: many terms below e^-87 of the maximum
      std::normal_distribution<float> d(3.0f, spread);
      std::vector<float> row(n), out(n);
      for (auto& v : row) v = d(gen);
      const float lse = softmax_row(row.data(), n, out.data());
      std::vector<double> p;
      double want_lse;
      reference(row, p, want_lse);
      EXPECT_NEAR(lse, want_lse, 4 * kRelTol * std::max(1.0, std::abs(want_lse))) << n << " " << spread;
      double total = 0;
      for (int64_t j = 0; j < n; ++j) {
        EXPECT_NEAR(out[j], p[j], 4 * kRelTol * p[j] + 1e-37) << "n " << n << " j " << j;
        total += out[j];
      }
      EXPECT_NEAR(total, 1.0, 1e-5);
    }
  }
}

TEST(SoftmaxRows, InPlaceGivesTheSameValues) {
  std::vector<float> row = {0.5f, -2.0f, 3.25f, 1.0f, 0.0f, -7.5f, 2.0f, 2.0f, 1.5f, -0.25f,
                            4.0f, 3.0f, -1.0f, 0.75f, 0.1f, 0.2f, 9.0f, -3.0f};
  std::vector<float> out(row.size());
  const float lse = softmax_row(row.data(), static_cast<int64_t>(row.size()), out.data());
  const float lse_in_place = softmax_row(row.data(), static_cast<int64_t>(row.size()), row.data());
  EXPECT_EQ(lse, lse_in_place);
  EXPECT_EQ(row, out);
}

TEST(SoftmaxRows, ScaleMultipliesTheSoftmax) {
  std::vector<float> row = {0.5f, -2.0f, 3.25f, 1.0f, 0.0f, -7.5f, 2.0f, 2.0f, 1.5f, -0.25f,
                            4.0f, 3.0f, -1.0f, 0.75f, 0.1f, 0.2f, 9.0f, -3.0f, 0.3f};
  const int64_t n = static_cast<int64_t>(row.size());
  std::vector<float> plain(row.size()), scaled(row.size());
  const float lse = softmax_row(row.data(), n, plain.data());
  EXPECT_EQ(softmax_row(row.data(), n, scaled.data(), 0.125f), lse);  // the log-sum-exp does not change
  for (int64_t j = 0; j < n; ++j) EXPECT_FLOAT_EQ(scaled[j], 0.125f * plain[j]) << j;
}

TEST(SoftmaxRows, MinusInfinityGetsZeroNanAndAllMinusInfinityGiveNan) {
  const float inf = std::numeric_limits<float>::infinity();
  // Hand computed: the finite entries 0 and ln 3 share the mass 1 : 3; log-sum-exp = ln 4.
  std::vector<float> row(20, -inf), out(20);
  row[3] = 0.0f;
  row[17] = std::log(3.0f);
  const float lse = softmax_row(row.data(), 20, out.data());
  EXPECT_NEAR(lse, std::log(4.0), 1e-6);
  EXPECT_NEAR(out[3], 0.25, 1e-7);
  EXPECT_NEAR(out[17], 0.75, 1e-7);
  for (int j = 0; j < 20; ++j) {
    if (j != 3 && j != 17) EXPECT_EQ(out[j], 0.0f) << j;
  }

  for (int64_t nan_at : {0, 5, 16, 19}) {  // in the vector part and in the tail
    std::vector<float> bad(20, 1.0f);
    bad[nan_at] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_TRUE(std::isnan(softmax_row(bad.data(), 20, out.data()))) << nan_at;
    for (int j = 0; j < 20; ++j) EXPECT_TRUE(std::isnan(out[j])) << nan_at << " " << j;
  }
  std::vector<float> all_minus_inf(20, -inf);
  EXPECT_TRUE(std::isnan(softmax_row(all_minus_inf.data(), 20, out.data())));
}

}  // namespace softmax_rows_test
}  // namespace tzrec::loss
