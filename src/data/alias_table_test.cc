// The alias table: exact probabilities, a chi-square test of the draws against the weights
// (fixed seed, threshold the 0.001 critical value), uniform tables, and bad weights.
#include "data/alias_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace tzrec::data {
namespace alias_table_test {

double chi_square(const std::vector<int64_t>& counts, const std::vector<double>& probs, int64_t draws) {
  double chi2 = 0.0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (probs[i] == 0.0) continue;
    const double expected = probs[i] * static_cast<double>(draws);
    const double d = static_cast<double>(counts[i]) - expected;
    chi2 += d * d / expected;
  }
  return chi2;
}

TEST(AliasTable, ProbabilitiesMatchWeights) {
  const std::vector<float> w{1, 2, 3, 0, 4, 0.5f, 100, 0, 7, 1e-3f};
  AliasTable t(w);
  double sum = 0;
  for (float x : w) sum += x;
  double total = 0;
  for (uint32_t i = 0; i < w.size(); ++i) {
    EXPECT_NEAR(t.probability(i), w[i] / sum, 1e-8) << i;
    total += t.probability(i);
  }
  EXPECT_NEAR(total, 1.0, 1e-9);
  EXPECT_EQ(t.probability(3), 0.0);  // zero weights are never drawn
  EXPECT_EQ(t.probability(7), 0.0);
}

TEST(AliasTable, ExtremeWeights) {
  const std::vector<float> w{1e-6f, 1.0f, 1e6f};
  AliasTable t(w);
  const double sum = 1e-6 + 1.0 + 1e6;
  EXPECT_NEAR(t.probability(0), 1e-6 / sum, 1e-9);
  EXPECT_NEAR(t.probability(1), 1.0 / sum, 1e-9);
  EXPECT_NEAR(t.probability(2), 1e6 / sum, 1e-9);
}

// 40 items with weights 1..40, 2M draws, seed 7: chi-square with 39 degrees of freedom must stay
// below 72.05, its 0.999 quantile (a fair sampler exceeds it for 0.1% of seeds).
TEST(AliasTable, ChiSquareAgainstWeights) {
  std::vector<float> w;
  for (int i = 1; i <= 40; ++i) w.push_back(static_cast<float>(i));
  AliasTable t(w);
  const int64_t draws = 2000000;
  std::vector<int64_t> counts(w.size(), 0);
  SamplerRng rng(7);
  for (int64_t i = 0; i < draws; ++i) ++counts[t.draw(rng.next())];
  std::vector<double> probs;
  for (float x : w) probs.push_back(x / 820.0);
  const double chi2 = chi_square(counts, probs, draws);
  EXPECT_LT(chi2, 72.05);
  EXPECT_GT(chi2, 0.0);
}

// Zero-weight items are never drawn; the rest follow their weights (chi-square, 0.999 quantile
// of 5 degrees of freedom: 20.52).
TEST(AliasTable, ZeroWeightsNeverDrawn) {
  const std::vector<float> w{0, 3, 0, 1, 2, 0, 6, 0, 4, 4};
  AliasTable t(w);
  const int64_t draws = 600000;
  std::vector<int64_t> counts(w.size(), 0);
  SamplerRng rng(11);
  for (int64_t i = 0; i < draws; ++i) ++counts[t.draw(rng.next())];
  EXPECT_EQ(counts[0] + counts[2] + counts[5] + counts[7], 0);
  std::vector<double> probs;
  for (float x : w) probs.push_back(x / 20.0);
  EXPECT_LT(chi_square(counts, probs, draws), 20.52);
}

// Uniform tables: 13 indices, chi-square with 12 degrees of freedom below 32.91 (0.999 quantile).
TEST(AliasTable, Uniform) {
  AliasTable t = AliasTable::uniform(13);
  EXPECT_TRUE(t.is_uniform());
  EXPECT_NEAR(t.probability(5), 1.0 / 13, 1e-15);
  const int64_t draws = 390000;
  std::vector<int64_t> counts(13, 0);
  SamplerRng rng(3);
  for (int64_t i = 0; i < draws; ++i) ++counts[t.draw(rng.next())];
  EXPECT_LT(chi_square(counts, std::vector<double>(13, 1.0 / 13), draws), 32.91);
}

TEST(AliasTable, SingleItem) {
  AliasTable t(std::vector<float>{2.5f});
  SamplerRng rng(1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(t.draw(rng.next()), 0u);
}

TEST(AliasTable, BadWeightsThrow) {
  EXPECT_THROW(AliasTable(std::vector<float>{}), std::invalid_argument);
  EXPECT_THROW(AliasTable(std::vector<float>{0, 0}), std::invalid_argument);
  EXPECT_THROW(AliasTable(std::vector<float>{1, -1}), std::invalid_argument);
  EXPECT_THROW(AliasTable(std::vector<float>{1, std::numeric_limits<float>::quiet_NaN()}), std::invalid_argument);
  EXPECT_THROW(AliasTable(std::vector<float>{1, std::numeric_limits<float>::infinity()}), std::invalid_argument);
  EXPECT_THROW(AliasTable::uniform(0), std::invalid_argument);
}

TEST(SamplerRng, DeterministicPerSeed) {
  SamplerRng a(42), b(42), c(43);
  for (int i = 0; i < 10; ++i) {
    const uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    EXPECT_NE(x, c.next());
  }
}

}  // namespace alias_table_test
}  // namespace tzrec::data
