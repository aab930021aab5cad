// TouchedRows and TouchedIds (touched_rows.h, touched_ids.h), and the fused operator marking the
// rows its training lookups read. Expected values: the ids given, by hand.
#include "embedding/touched_rows.h"

#include <gtest/gtest.h>

#include "embedding/fused_embedding_bags.h"
#include "embedding/touched_ids.h"

namespace tzrec::embedding {
namespace touched_rows_test {

std::vector<int64_t> as_vector(const torch::Tensor& t) {
  return std::vector<int64_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
}

TEST(TouchedRows, TakesTheMarkedRowsAscendingOnceEach) {
  TouchedRows rows(200);
  const std::vector<int64_t> a = {130, 5, 64, 5, 199, 63};
  rows.mark(a.data(), static_cast<int64_t>(a.size()));
  const std::vector<int64_t> b = {0, 130};
  rows.mark(b.data(), 2);
  EXPECT_EQ(as_vector(rows.take()), (std::vector<int64_t>{0, 5, 63, 64, 130, 199}));
  EXPECT_EQ(rows.take().numel(), 0);  // taking clears
  const std::vector<int64_t> c = {7};
  rows.mark(c.data(), 1);
  EXPECT_EQ(as_vector(rows.take()), (std::vector<int64_t>{7}));
}

TEST(TouchedIds, DistinctIdsAscendingAcrossCompactions) {
  TouchedIds ids;
  ids.add(torch::tensor({5, -3, 5}, torch::kInt64));
  ids.add(torch::tensor({int64_t{1} << 62, int64_t{2}}, torch::kInt64));
  // Past the compaction threshold (4M pending ids): the older ids stay.
  ids.add(torch::arange(0, 5000000, torch::kInt64).remainder(10));
  ids.add(torch::tensor({-3, 11}, torch::kInt32));
  EXPECT_EQ(as_vector(ids.take()), (std::vector<int64_t>{-3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, int64_t{1} << 62}));
  EXPECT_EQ(ids.take().numel(), 0);
}

TEST(FusedEmbeddingBagsTouchedRows, TrainingLookupsMarkTheirTablesEvaluationDoesNot) {
  FusedTableSpec a{"a", torch::randn({10, 4}), true};
  FusedTableSpec b{"b", torch::randn({6, 2}), false};  // frozen tables are marked too
  FusedEmbeddingBags bags({a, b}, {{"fa", "a"}, {"fb", "b"}, {"fa2", "a"}}, FusedOptimizerOptions{});
  bags.track_touched_rows();
  auto input = [](std::vector<int64_t> ids, std::vector<int64_t> lengths) {
    FusedFeatureInput in;
    in.ids = torch::tensor(ids, torch::kInt64);
    in.lengths = torch::tensor(lengths, torch::kInt64);
    return in;
  };
  bags.forward({input({3, 9, 3}, {2, 1}), input({5}, {1, 0}), input({0}, {0, 1})});
  {
    torch::NoGradGuard no_grad;  // evaluation
    bags.forward({input({1}, {1, 0}), input({2}, {0, 1}), input({4}, {1, 0})});
  }
  EXPECT_EQ(as_vector(bags.take_touched_rows(0)), (std::vector<int64_t>{0, 3, 9}));
  EXPECT_EQ(as_vector(bags.take_touched_rows(1)), (std::vector<int64_t>{5}));
  EXPECT_EQ(bags.take_touched_rows(0).numel(), 0);
  const torch::Tensor rows = bags.read_rows(0, torch::tensor({9, 3}, torch::kInt64));
  EXPECT_TRUE(torch::equal(rows, bags.tables()[0].weight.detach().index_select(0, torch::tensor({9, 3}))));
}

}  // namespace touched_rows_test
}  // namespace tzrec::embedding
