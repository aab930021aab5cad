// Tests for XAuc / GroupedXAuc: hand-computed pair counts, values from a brute-force O(n^2) Python
// count, the sampled estimate against the exact value, and bad input.
#include "metrics/xauc.h"

#include <cmath>
#include <map>

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::metrics {
namespace xauc_test {

torch::Tensor f32(const std::vector<double>& v) { return torch::tensor(v, torch::kFloat32); }
torch::Tensor f64(const std::vector<double>& v) { return torch::tensor(v, torch::kFloat64); }

// Brute-force concordance count, independent of the Fenwick-tree implementation.
uint64_t brute_concordant(const std::vector<float>& p, const std::vector<double>& t) {
  uint64_t c = 0;
  for (size_t i = 0; i < p.size(); ++i)
    for (size_t j = i + 1; j < p.size(); ++j) c += (t[i] - t[j]) * (static_cast<double>(p[i]) - p[j]) > 0;
  return c;
}

// Data generated with numpy (RandomState(11)), heavy ties in both targets and predictions:
//   t = rng.randint(0, 8, 60); p = np.round(rng.rand(60) + 0.05 * t, 1).astype(np.float32)
//   g = rng.randint(0, 6, 60)
// Reference values by a brute-force Python loop over all pairs, counting (t_i-t_j)*(p_i-p_j) > 0:
//   xauc(all 60) = 0.4937853107344633; in-batch mean over rows [0,25) and [25,60) = 0.5017647058823529;
//   grouped (weights = group size, groups with > 1 row) = 0.497944277944278.
const std::vector<double> kT = {1, 7, 0, 3, 1, 7, 5, 4, 1, 7, 2, 0, 5, 4, 0, 5, 0, 5, 4, 5, 4, 2, 4, 1, 2, 5, 5, 7, 4, 1,
                                3, 0, 0, 1, 3, 6, 3, 2, 2, 0, 5, 7, 0, 7, 3, 6, 1, 3, 2, 1, 3, 4, 5, 6, 7, 7, 7, 0, 0, 0};
const std::vector<double> kP = {0.5, 1.2, 0.7, 0.8, 0.6, 1.3, 1.2, 0.5, 0.3, 1.1, 0.2, 0.4, 0.3, 0.5, 0.1,
                                0.5, 0.8, 1.2, 1.0, 0.8, 0.8, 0.5, 0.4, 0.5, 0.8, 0.3, 0.3, 1.1, 0.5, 0.8,
                                0.9, 0.9, 0.4, 0.4, 1.0, 1.1, 0.8, 0.9, 0.7, 1.0, 0.6, 1.1, 0.9, 0.7, 0.8,
                                0.7, 0.5, 0.2, 0.1, 0.8, 0.6, 0.8, 1.0, 0.7, 0.7, 0.5, 1.1, 0.8, 0.7, 0.9};
const std::vector<double> kG = {4, 2, 4, 1, 1, 5, 4, 1, 3, 3, 2, 3, 3, 2, 0, 1, 3, 2, 3, 0, 0, 3, 3, 2, 1, 5, 2, 4, 5, 5,
                                2, 3, 1, 2, 2, 3, 1, 1, 4, 3, 5, 3, 1, 0, 1, 3, 0, 4, 2, 1, 0, 1, 2, 2, 1, 5, 3, 3, 4, 1};

TEST(XAuc, HandComputedPairsAndTies) {
  // Pairs of (p, t) = (.1,1) (.4,2) (.35,3) (.8,4): only (.4,2)-(.35,3) is discordant → 5/6.
  EXPECT_DOUBLE_EQ(exact_xauc({0.1f, 0.4f, 0.35f, 0.8f}, {1, 2, 3, 4}), 5.0 / 6.0);
  // (.5,1) (.5,2) (.2,2) (.9,3): tie in p, discordant, concordant, tie in t, concordant, concordant:
  // ties count in the denominator only → 3/6.
  EXPECT_DOUBLE_EQ(exact_xauc({0.5f, 0.5f, 0.2f, 0.9f}, {1, 2, 2, 3}), 0.5);
  // All targets equal: no pair is concordant.
  EXPECT_DOUBLE_EQ(exact_xauc({0.1f, 0.2f, 0.3f}, {5, 5, 5}), 0.0);
  EXPECT_DOUBLE_EQ(exact_xauc({0.3f, 0.2f, 0.1f}, {1, 2, 3}), 0.0);
  EXPECT_TRUE(std::isnan(exact_xauc({0.3f}, {1})));
  EXPECT_TRUE(std::isnan(exact_xauc({}, {})));
}

TEST(XAuc, ExactMatchesPythonBruteForceInBatchesAndMerged) {
  XAuc a, b;  // 1770 pairs <= exact_pair_limit → compute() is exact
  a.update(f32(std::vector<double>(kP.begin(), kP.begin() + 25)), f64(std::vector<double>(kT.begin(), kT.begin() + 25)));
  b.update(f32(std::vector<double>(kP.begin() + 25, kP.end())), f64(std::vector<double>(kT.begin() + 25, kT.end())));
  a.merge(b);
  EXPECT_EQ(a.num_samples(), 60);
  EXPECT_NEAR(a.compute(), 0.4937853107344633, 1e-12);
  EXPECT_NEAR(a.compute_exact(), 0.4937853107344633, 1e-12);
  // Integer targets (watch time as int64) give the same value.
  XAuc c;
  c.update(f32(kP), torch::tensor(std::vector<int64_t>(kT.begin(), kT.end())));
  EXPECT_NEAR(c.compute(), 0.4937853107344633, 1e-12);
  a.reset();
  EXPECT_TRUE(std::isnan(a.compute()));
}

TEST(XAuc, FenwickCountEqualsBruteForceOnRandomData) {
  torch::manual_seed(5);
  for (int trial = 0; trial < 5; ++trial) {
    const int64_t n = 200 + trial * 37;
    torch::Tensor p = (torch::rand({n}) * 20).round() / 20;  // ties
    torch::Tensor t = (torch::rand({n}) * 10).floor().to(torch::kFloat64);
    std::vector<float> pv(p.data_ptr<float>(), p.data_ptr<float>() + n);
    std::vector<double> tv(t.data_ptr<double>(), t.data_ptr<double>() + n);
    EXPECT_EQ(count_concordant_pairs(pv, tv), brute_concordant(pv, tv)) << "trial " << trial;
  }
}

TEST(XAuc, InBatchAveragesPerBatchValues) {
  XAucOptions o;
  o.in_batch = true;
  XAuc x(o);
  x.update(f32(std::vector<double>(kP.begin(), kP.begin() + 25)), f64(std::vector<double>(kT.begin(), kT.begin() + 25)));
  x.update(f32({0.7}), f64({3}));  // single-row batch: no pair, skipped
  x.update(f32(std::vector<double>(kP.begin() + 25, kP.end())), f64(std::vector<double>(kT.begin() + 25, kT.end())));
  EXPECT_NEAR(x.compute(), 0.5017647058823529, 1e-12);
  EXPECT_THROW(x.compute_exact(), UsageError);
  XAuc empty(o);
  EXPECT_TRUE(std::isnan(empty.compute()));
}

TEST(XAuc, SampledEstimateIsCloseToExactAndRepeatable) {
  torch::manual_seed(9);
  const int64_t n = 3000;  // 4498500 pairs
  torch::Tensor t = torch::rand({n}, torch::kFloat64) * 100;
  torch::Tensor p = (t.to(torch::kFloat32) + torch::randn({n}) * 40) / 100;
  XAucOptions o;
  o.max_pairs = 100000;  // < 4 n ceil(log2 n) = 144000: sampled
  o.exact_pair_limit = 0;
  o.seed = 42;
  XAuc x(o);
  x.update(p, t);
  const double exact = x.compute_exact();
  const double sampled = x.compute();
  EXPECT_NE(sampled, exact);  // really sampled
  // Standard error of a 100000-pair sample <= sqrt(0.25 / 100000) = 0.00158; allow 5 sigma.
  EXPECT_NEAR(sampled, exact, 5 * 0.00158);
  EXPECT_DOUBLE_EQ(x.compute(), sampled);  // same seed, same pairs
  XAucOptions o2 = o;
  o2.seed = 43;
  XAuc y(o2);
  y.update(p, t);
  EXPECT_NE(y.compute(), sampled);
  EXPECT_NEAR(y.compute(), exact, 5 * 0.00158);
  // sample_ratio: floor(4498500 * 0.02) = 89970 pairs; standard error <= 0.00167.
  XAucOptions o3;
  o3.sample_ratio = 0.02;
  o3.exact_pair_limit = 0;
  XAuc z(o3);
  z.update(p, t);
  EXPECT_NEAR(z.compute(), exact, 5 * 0.00167);
  // max_pairs >= number of pairs, or >= 4 n ceil(log2 n) (exact is cheaper) → exact.
  for (uint64_t max_pairs : {5000000ULL, 144000ULL}) {
    XAucOptions o4;
    o4.max_pairs = max_pairs;
    o4.exact_pair_limit = 0;
    XAuc w(o4);
    w.update(p, t);
    EXPECT_DOUBLE_EQ(w.compute(), exact) << max_pairs;
  }
  // Default exact_pair_limit (1e7 pairs) covers this set: exact.
  XAuc d;
  d.update(p, t);
  EXPECT_DOUBLE_EQ(d.compute(), exact);
}

TEST(XAuc, PairSamplerIsUniformOverPairs) {
  PairSampler s(1);
  std::map<std::pair<uint64_t, uint64_t>, int> counts;
  const int draws = 100000;
  for (int i = 0; i < draws; ++i) {
    auto pr = s.next_pair(6);
    ASSERT_LT(pr.first, pr.second);
    ASSERT_LT(pr.second, 6u);
    counts[pr]++;
  }
  ASSERT_EQ(counts.size(), 15u);
  for (const auto& [pr, c] : counts) EXPECT_NEAR(c, draws / 15.0, 5 * std::sqrt(draws / 15.0)) << pr.first << pr.second;
  // Large n: indices stay in range.
  for (int i = 0; i < 1000; ++i) {
    auto pr = s.next_pair(3000000000ULL);
    ASSERT_LT(pr.first, pr.second);
    ASSERT_LT(pr.second, 3000000000ULL);
  }
}

TEST(XAuc, RejectsBadInputAndConfig) {
  XAuc x;
  EXPECT_THROW(x.update(f32({0.1, NAN}), f64({1, 2})), DataError);
  EXPECT_THROW(x.update(f32({0.1, 0.2}), f64({1, NAN})), DataError);
  EXPECT_THROW(x.update(f32({0.1, 0.2}), f64({1})), UsageError);
  XAucOptions o;
  o.sample_ratio = 0;
  EXPECT_THROW(XAuc{o}, ConfigError);
  o.sample_ratio = 1.5;
  EXPECT_THROW(XAuc{o}, ConfigError);
}

TEST(GroupedXAuc, MatchesPythonBruteForce) {
  // Group sizes 6, 14, 12, 15, 7, 6: group 3 has 105 pairs, so max_pairs_per_group = 105 keeps every
  // group exact, and the default 100 samples group 3.
  GroupedXAuc g(105);
  g.update(f32(std::vector<double>(kP.begin(), kP.begin() + 30)), f64(std::vector<double>(kT.begin(), kT.begin() + 30)),
           torch::tensor(std::vector<double>(kG.begin(), kG.begin() + 30)).to(torch::kInt64));
  GroupedXAuc h(105);
  h.update(f32(std::vector<double>(kP.begin() + 30, kP.end())), f64(std::vector<double>(kT.begin() + 30, kT.end())),
           torch::tensor(std::vector<double>(kG.begin() + 30, kG.end())).to(torch::kInt64));
  g.merge(h);
  EXPECT_NEAR(g.compute(), 0.497944277944278, 1e-12);
  EXPECT_EQ(g.num_valid_groups(), 6);
  GroupedXAuc d;
  d.update(f32(kP), f64(kT), torch::tensor(kG).to(torch::kInt64));
  EXPECT_NE(d.compute(), g.compute());
  EXPECT_NEAR(d.compute(), 0.497944277944278, 0.05);
}

TEST(GroupedXAuc, HandComputedWeightsAndSkippedSingletons) {
  // Group 7: 3 rows, xauc 2/3 ((.1,1)(.3,2)(.2,3): concordant, concordant, discordant);
  // group 8: 2 rows, xauc 0; group 9: 1 row, skipped. Weighted: (3 * 2/3 + 2 * 0) / 5 = 0.4.
  GroupedXAuc g;
  g.update(f32({0.1, 0.9, 0.3, 0.5, 0.2, 0.4}), f64({1, 1, 2, 9, 3, 2}), torch::tensor({7, 8, 7, 9, 7, 8}));
  EXPECT_NEAR(g.compute(), 0.4, 1e-12);
  EXPECT_EQ(g.num_valid_groups(), 2);
  GroupedXAuc single;
  single.update(f32({0.1, 0.2}), f64({1, 2}), torch::tensor({1, 2}));
  EXPECT_TRUE(std::isnan(single.compute()));
  EXPECT_THROW(single.update(f32({NAN}), f64({1}), torch::tensor({1})), DataError);
  EXPECT_THROW(single.update(f32({0.1}), f64({1}), torch::tensor({1, 2})), UsageError);
}

TEST(GroupedXAuc, LargeGroupsAreSampledNearTheExactValue) {
  torch::manual_seed(3);
  const int64_t n = 4000;
  torch::Tensor t = torch::rand({n}, torch::kFloat64);
  torch::Tensor p = t.to(torch::kFloat32) + torch::randn({n}) * 0.3f;
  torch::Tensor grp = torch::arange(n) % 4;  // 4 groups of 1000 rows
  GroupedXAuc sampled(20000, 17), exact(1000000);  // 499500 pairs per group
  sampled.update(p, t, grp);
  exact.update(p, t, grp);
  const double e = exact.compute();
  const double s = sampled.compute();
  EXPECT_NE(s, e);
  // Mean of 4 group estimates of 20000 pairs each: standard error <= sqrt(0.25 / 80000) = 0.00177.
  EXPECT_NEAR(s, e, 5 * 0.00177);
  EXPECT_DOUBLE_EQ(sampled.compute(), s);
  EXPECT_EQ(GroupedXAuc(0).max_pairs_per_group(), 100u);
}

}  // namespace xauc_test
}  // namespace tzrec::metrics
