// route_to_owners (embedding/id_exchange.h) over a process group: every id reaches the rank that
// id_owner_rank gives it, once per table, and its row comes back to its place — with tables that
// have no ids on some rank and a table every rank skips. Expected values: the owner rule of
// embedding/id_owner.h and a row function of (table, id) chosen here.
#include "dist/process_group_id_exchange.h"

#include <vector>

#include <gtest/gtest.h>

#include "dist/testing_multiprocess.h"
#include "embedding/id_owner.h"

namespace tzrec::dist {
namespace process_group_id_exchange_test {

TEST(ProcessGroupIdExchange, RoutesEveryIdToItsOwnerAndBack) {
  testing::expect_all_succeeded(testing::run_ranks(3, [](ProcessGroup& pg) {
    auto pg_ptr = pg.shared_from_this();
    ProcessGroupIdExchange exchange(pg_ptr);
    const int rank = pg.rank();
    // Table 0: 40 ids per rank (repeats included); table 1: skipped by every rank; table 2: ids
    // on rank 1 only.
    std::vector<torch::Tensor> ids(3);
    ids[0] = torch::arange(rank * 7, rank * 7 + 40, torch::kInt64).remainder(50);
    ids[2] = rank == 1 ? torch::tensor(std::vector<int64_t>{-5, int64_t{1} << 40, 3}, torch::kInt64) : torch::empty({0}, torch::kInt64);
    std::vector<int> calls(3, 0);
    const auto rows = embedding::route_to_owners(
        exchange, ids,
        [&](size_t t, const torch::Tensor& owned) {
          ++calls[t];
          for (int64_t i = 0; i < owned.numel(); ++i) {
            EXPECT_EQ(embedding::id_owner_rank(owned[i].item<int64_t>(), 3), rank) << "table " << t;
          }
          return owned * 10 + static_cast<int64_t>(t);
        },
        "test tables");
    EXPECT_EQ(calls, (std::vector<int>{1, 0, 1}));
    EXPECT_FALSE(rows[1].defined());
    EXPECT_TRUE(torch::equal(rows[0], ids[0] * 10));
    EXPECT_TRUE(torch::equal(rows[2], ids[2] * 10 + 2));
  }));
}

}  // namespace process_group_id_exchange_test
}  // namespace tzrec::dist
