// Per-request hit rates and the merge across interests, against hand-computed values (the rules of
// TorchEasyRec's tzrec/tools/hitrate.py batch_hitrate; docs/tzrec-compatibility.md §3.5).
#include "retrieval/hitrate.h"

#include <gtest/gtest.h>

namespace tzrec::retrieval {
namespace hitrate_test {

using Ids = std::vector<std::string>;

TEST(Hitrate, RequestHitsCountDistinctGroundTruthOverValidInterests) {
  // Ground truth {a, b, c, d} (a twice); interest 0 recalls a, x, b; interest 1 recalls c, a.
  RequestHits h = request_hits({{"a", "x", "b"}, {"c", "a"}}, {"a", "b", "a", "c", "d"}, 2);
  EXPECT_FALSE(h.skipped);
  EXPECT_EQ(h.hits, 3.0);
  EXPECT_EQ(h.gt_count, 4.0);
  EXPECT_DOUBLE_EQ(h.hitrate, 0.75);
  EXPECT_EQ(h.hit_ids, (Ids{"a", "b", "c"}));
  // Only the first valid interest counts.
  RequestHits one = request_hits({{"a", "x", "b"}, {"c", "a"}}, {"a", "b", "c", "d"}, 1);
  EXPECT_DOUBLE_EQ(one.hitrate, 0.5);
  // No ground truth: skipped.
  EXPECT_TRUE(request_hits({{"a"}}, {}, 1).skipped);
}

TEST(Hitrate, MergeAcrossInterestsKeepsEachItemOnceAtItsBestScore) {
  // Interest 0: items 4 (0.9), 7 (0.5); interest 1: 7 (0.8), 2 (0.5); interest 2 is all zeros.
  torch::Tensor scores = torch::tensor({{0.9f, 0.5f}, {0.8f, 0.5f}, {5.0f, 4.0f}});
  torch::Tensor indices = torch::tensor({{4, 7}, {7, 2}, {1, 3}}, torch::kInt64);
  torch::Tensor nonzero = torch::tensor({true, true, false});
  std::vector<float> s;
  std::vector<int64_t> ix;
  merge_interests(scores, indices, nonzero, 3, 3, Metric::kInnerProduct, &s, &ix);
  EXPECT_EQ(ix, (std::vector<int64_t>{4, 7, 2}));
  EXPECT_EQ(s, (std::vector<float>{0.9f, 0.8f, 0.5f}));
  // L2: smaller first; only the first valid interest.
  merge_interests(scores, indices, nonzero, 1, 3, Metric::kL2, &s, &ix);
  EXPECT_EQ(ix, (std::vector<int64_t>{7, 4}));
}

}  // namespace hitrate_test
}  // namespace tzrec::retrieval
