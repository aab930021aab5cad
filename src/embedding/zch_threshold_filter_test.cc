#include "embedding/zch_threshold_filter.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::embedding {
namespace zch_threshold_filter_test {

using Kind = ZchThresholdFilter::Kind;

torch::Tensor counts_of(const std::vector<int64_t>& c) { return torch::tensor(c, torch::kInt64); }

std::vector<bool> mask_of(const torch::Tensor& mask) {
  std::vector<bool> out;
  for (int64_t i = 0; i < mask.numel(); ++i) out.push_back(mask[i].item<bool>());
  return out;
}

TEST(ZchThresholdFilter, ParsesTheDocumentedForms) {
  // The forms of TorchEasyRec's docs/source/feature/zch.md and tzrec/features/id_feature_test.py.
  auto f = ZchThresholdFilter::parse("lambda x: (x > 10, 10)");
  EXPECT_EQ(f.kind(), Kind::kGreater);
  EXPECT_EQ(f.parameter(), 10.0);
  EXPECT_EQ(f.reported_threshold(), 10.0);

  f = ZchThresholdFilter::parse("lambda x: dynamic_threshold_filter(x, 1.0)");
  EXPECT_EQ(f.kind(), Kind::kDynamic);
  EXPECT_EQ(f.parameter(), 1.0);

  f = ZchThresholdFilter::parse("lambda x: probabilistic_threshold_filter(x,0.05)");
  EXPECT_EQ(f.kind(), Kind::kProbabilistic);
  EXPECT_EQ(f.parameter(), 0.05);

  f = ZchThresholdFilter::parse("partial(dynamic_threshold_filter, threshold_skew_multiplier=1.0)");
  EXPECT_EQ(f.kind(), Kind::kDynamic);
  EXPECT_EQ(f.parameter(), 1.0);

  f = ZchThresholdFilter::parse("average_threshold_filter");
  EXPECT_EQ(f.kind(), Kind::kAverage);
}

TEST(ZchThresholdFilter, ParsesVariantsAndDefaults) {
  auto f = ZchThresholdFilter::parse("  lambda ids :( ids>=2.5 , 3 )  ");
  EXPECT_EQ(f.kind(), Kind::kGreaterEqual);
  EXPECT_EQ(f.parameter(), 2.5);
  EXPECT_EQ(f.reported_threshold(), 3.0);

  f = ZchThresholdFilter::parse("lambda x: dynamic_threshold_filter(x)");
  EXPECT_EQ(f.parameter(), 10.0);  // TorchRec's default threshold_skew_multiplier
  f = ZchThresholdFilter::parse(
      "lambda x: dynamic_threshold_filter(x, threshold_skew_multiplier=.5)");
  EXPECT_EQ(f.parameter(), 0.5);
  f = ZchThresholdFilter::parse("dynamic_threshold_filter");
  EXPECT_EQ(f.parameter(), 10.0);

  f = ZchThresholdFilter::parse("probabilistic_threshold_filter");
  EXPECT_EQ(f.kind(), Kind::kProbabilistic);
  EXPECT_EQ(f.parameter(), 0.01);  // TorchRec's default per_id_probability
  f = ZchThresholdFilter::parse(
      "lambda c: probabilistic_threshold_filter(c, per_id_probability=1e-3)");
  EXPECT_EQ(f.parameter(), 1e-3);
  f = ZchThresholdFilter::parse("partial(probabilistic_threshold_filter, 0.2)");
  EXPECT_EQ(f.parameter(), 0.2);

  f = ZchThresholdFilter::parse("lambda x: average_threshold_filter(x)");
  EXPECT_EQ(f.kind(), Kind::kAverage);
  f = ZchThresholdFilter::parse("partial(average_threshold_filter)");
  EXPECT_EQ(f.kind(), Kind::kAverage);

  f = ZchThresholdFilter::parse("lambda x: (x > -1, 0)");
  EXPECT_EQ(f.parameter(), -1.0);
}

TEST(ZchThresholdFilter, RefusesEverythingElse) {
  const std::vector<std::string> bad = {
      "",
      "lambda x: x > 10",                            // not a (mask, threshold) pair
      "lambda x: (x < 10, 10)",                      // only > and >=
      "lambda x: (y > 10, 10)",                      // not the lambda's variable
      "lambda x: (x > 10)",                          // no threshold
      "lambda x: torch.topk(x, 3)",                  // arbitrary Python
      "lambda x: dynamic_threshold_filter(y, 1.0)",  // not the lambda's variable
      "lambda x: dynamic_threshold_filter(x, per_id_probability=1.0)",  // wrong keyword
      "lambda x: average_threshold_filter(x, 2)",                       // takes no argument
      "lambda x: my_filter(x)",
      "partial(dynamic_threshold_filter, 1.0",  // unbalanced
      "dynamic_threshold_filter(x, 1.0)",       // no lambda around the call
      "average_threshold_filter extra",
      "lambda x: (x > 1e999, 1)",  // not finite
      "lambda x: (x > 10, 10); import os",
  };
  for (const std::string& text : bad) {
    try {
      ZchThresholdFilter::parse(text, "feature_configs[2].id_feature.zch.threshold_filtering_func");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("feature_configs[2].id_feature.zch.threshold_filtering_func: cannot parse "
                         "threshold_filtering_func '" +
                         text + "'"),
                std::string::npos)
          << msg;
      EXPECT_NE(msg.find("accepted: 'lambda x: (x > N, N)'"), std::string::npos) << msg;
    }
  }
}

TEST(ZchThresholdFilter, ComparisonForm) {
  auto f = ZchThresholdFilter::parse("lambda x: (x > 10, 10)");
  auto r = f.apply(counts_of({5, 10, 11, 100}));
  EXPECT_EQ(mask_of(r.mask), (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(r.threshold.item<float>(), 10.0f);

  f = ZchThresholdFilter::parse("lambda x: (x >= 10, 10)");
  EXPECT_EQ(mask_of(f.apply(counts_of({5, 10, 11})).mask), (std::vector<bool>{false, true, true}));

  f = ZchThresholdFilter::parse("lambda x: (x > 1.5, 1.5)");
  EXPECT_EQ(mask_of(f.apply(counts_of({1, 2})).mask), (std::vector<bool>{false, true}));

  // An int literal compares in int64: 2^53 + 1 > 2^53 holds, which float32 would lose.
  f = ZchThresholdFilter::parse("lambda x: (x > 9007199254740992, 0)");
  EXPECT_EQ(mask_of(f.apply(counts_of({9007199254740993LL, 9007199254740992LL})).mask),
            (std::vector<bool>{true, false}));
}

TEST(ZchThresholdFilter, DynamicThreshold) {
  // TorchRec test_mc_modules.py test_dynamic_threshold_filter: counts of ids 1..5 are 1..5,
  // multiplier 0.75 → threshold 15 / 5 * 0.75 = 2.25.
  auto f = ZchThresholdFilter::parse("lambda x: dynamic_threshold_filter(x, 0.75)");
  auto r = f.apply(counts_of({1, 2, 3, 4, 5}));
  EXPECT_FLOAT_EQ(r.threshold.item<float>(), 2.25f);
  EXPECT_EQ(r.threshold.scalar_type(), torch::kFloat32);
  EXPECT_EQ(mask_of(r.mask), (std::vector<bool>{false, false, true, true, true}));

  // Default multiplier 10: threshold = sum / U * 10 = 111 / 3 * 10 = 370 — nothing passes.
  f = ZchThresholdFilter::parse("dynamic_threshold_filter");
  r = f.apply(counts_of({100, 10, 1}));
  EXPECT_FLOAT_EQ(r.threshold.item<float>(), 370.0f);
  EXPECT_EQ(mask_of(r.mask), (std::vector<bool>{false, false, false}));
  f = ZchThresholdFilter::parse("partial(dynamic_threshold_filter, threshold_skew_multiplier=2)");
  r = f.apply(counts_of({100, 10, 1}));  // threshold 74
  EXPECT_EQ(mask_of(r.mask), (std::vector<bool>{true, false, false}));

  // No ids: nothing passes (TorchRec would divide by zero).
  r = f.apply(counts_of({}));
  EXPECT_EQ(r.mask.numel(), 0);
}

TEST(ZchThresholdFilter, AverageThreshold) {
  // TorchRec test_average_threshold_filter: the counts of ids 3..10 are 1,1,1,3,1,2,1,1 →
  // mean 1.375.
  auto f = ZchThresholdFilter::parse("average_threshold_filter");
  auto r = f.apply(counts_of({1, 1, 1, 3, 1, 2, 1, 1}));
  EXPECT_FLOAT_EQ(r.threshold.item<float>(), 1.375f);
  EXPECT_EQ(mask_of(r.mask),
            (std::vector<bool>{false, false, false, true, false, true, false, false}));
  // Equal counts: nothing is strictly above the mean.
  EXPECT_EQ(mask_of(f.apply(counts_of({2, 2})).mask), (std::vector<bool>{false, false}));
}

TEST(ZchThresholdFilter, ProbabilisticThreshold) {
  // score = 1 - (1 - p)^count against one uniform draw per id from the given generator.
  const std::vector<int64_t> counts = {100, 80, 60, 40, 10, 0};
  const double p = 0.01;
  auto f = ZchThresholdFilter::parse("lambda x: probabilistic_threshold_filter(x, 0.01)");
  at::Generator gen = at::detail::createCPUGenerator(7);
  const auto r = f.apply(counts_of(counts), gen);

  at::Generator same = at::detail::createCPUGenerator(7);
  const torch::Tensor draws = at::rand({static_cast<int64_t>(counts.size())}, same);
  ASSERT_TRUE(torch::equal(r.threshold, draws));
  for (size_t i = 0; i < counts.size(); ++i) {
    const double score = 1.0 - std::pow(1.0 - p, static_cast<double>(counts[i]));
    const double draw = draws[static_cast<int64_t>(i)].item<float>();
    if (std::abs(score - draw) > 1e-5) {
      EXPECT_EQ(r.mask[static_cast<int64_t>(i)].item<bool>(), score > draw)
          << "count " << counts[i];
    }
  }
  EXPECT_FALSE(r.mask[5].item<bool>());  // never seen → score 0

  // p = 1: every seen id passes.
  f = ZchThresholdFilter::parse("partial(probabilistic_threshold_filter, per_id_probability=1.0)");
  EXPECT_EQ(mask_of(f.apply(counts_of({1, 5}), gen).mask), (std::vector<bool>{true, true}));
}

}  // namespace zch_threshold_filter_test
}  // namespace tzrec::embedding
