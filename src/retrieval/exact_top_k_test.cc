// ExactTopK against a brute-force ranking of all items at once (full score matrix, stable sort by
// score with ties by item index), over item blocks of several sizes.
#include "retrieval/exact_top_k.h"

#include <gtest/gtest.h>

namespace tzrec::retrieval {
namespace exact_top_k_test {

// Brute force: scores of every item, stable-sorted (ties: lower index first), first k.
std::pair<torch::Tensor, torch::Tensor> brute_force(const torch::Tensor& q, const torch::Tensor& items, int64_t k,
                                                    Metric metric) {
  torch::Tensor s = metric == Metric::kInnerProduct ? torch::mm(q, items.t())
                                                    : (q.unsqueeze(1) - items.unsqueeze(0)).pow(2).sum(2);
  torch::Tensor order = std::get<1>(s.sort(/*stable=*/true, 1, /*descending=*/metric == Metric::kInnerProduct));
  order = order.slice(1, 0, k);
  return {s.gather(1, order), order};
}

void check(const torch::Tensor& q, const torch::Tensor& items, int64_t k, Metric metric, int64_t block) {
  ExactTopK search(q, k, metric);
  for (int64_t first = 0; first < items.size(0); first += block) {
    search.add_items(items.slice(0, first, first + block), first);
  }
  auto [want_scores, want_indices] = brute_force(q, items, k, metric);
  const ExactTopK::Result got = search.result();
  ASSERT_EQ(got.indices.sizes(), want_indices.sizes());
  EXPECT_TRUE(torch::equal(got.indices, want_indices)) << "block " << block;
  EXPECT_TRUE(torch::allclose(got.scores, want_scores, 1e-4, 1e-4)) << "block " << block;
}

TEST(ExactTopK, MatchesBruteForceOverBlocks) {
  torch::manual_seed(3);
  torch::Tensor q = torch::randn({17, 8});
  torch::Tensor items = torch::randn({1000, 8});
  for (Metric metric : {Metric::kInnerProduct, Metric::kL2}) {
    for (int64_t block : {1000, 128, 7}) check(q, items, 10, metric, block);
  }
}

TEST(ExactTopK, TiesRankTheEarlierItemFirst) {
  // Integer-valued embeddings with many equal scores; blocks split the tied items.
  torch::manual_seed(5);
  torch::Tensor q = torch::randint(-1, 2, {9, 3}).to(torch::kFloat32);
  torch::Tensor items = torch::randint(-1, 2, {300, 3}).to(torch::kFloat32);
  for (Metric metric : {Metric::kInnerProduct, Metric::kL2}) {
    for (int64_t block : {300, 16, 5}) check(q, items, 25, metric, block);
  }
}

TEST(ExactTopK, FewerItemsThanK) {
  torch::Tensor q = torch::tensor({{1.0f, 0.0f}});
  torch::Tensor items = torch::tensor({{0.0f, 1.0f}, {2.0f, 0.0f}, {1.0f, 0.0f}});
  ExactTopK search(q, 5, Metric::kInnerProduct);
  search.add_items(items.slice(0, 0, 2), 0);
  search.add_items(items.slice(0, 2, 3), 2);
  EXPECT_TRUE(torch::equal(search.result().indices, torch::tensor({{1, 2, 0}}, torch::kInt64)));
  EXPECT_TRUE(torch::equal(search.result().scores, torch::tensor({{2.0f, 1.0f, 0.0f}})));
  ExactTopK l2(q, 2, Metric::kL2);  // squared distances, as faiss reports L2
  l2.add_items(items, 0);
  EXPECT_TRUE(torch::equal(l2.result().indices, torch::tensor({{2, 1}}, torch::kInt64)));
  EXPECT_TRUE(torch::equal(l2.result().scores, torch::tensor({{0.0f, 1.0f}})));
}

}  // namespace exact_top_k_test
}  // namespace tzrec::retrieval
