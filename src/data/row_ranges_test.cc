#include "data/row_ranges.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::data {
namespace row_ranges_test {

using Ranges = std::vector<RowRange>;

TEST(RowRanges, SplitSizesGiveTheFirstRemainderWorkersOneMore) {
  EXPECT_EQ(split_sizes(10, 3), (std::vector<int64_t>{4, 3, 3}));
  EXPECT_EQ(split_sizes(11, 3), (std::vector<int64_t>{4, 4, 3}));
  EXPECT_EQ(split_sizes(9, 3), (std::vector<int64_t>{3, 3, 3}));
  EXPECT_EQ(split_sizes(2, 4), (std::vector<int64_t>{1, 1, 0, 0}));
  EXPECT_EQ(split_sizes(0, 2), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(split_sizes(7, 1), (std::vector<int64_t>{7}));
  EXPECT_THROW(split_sizes(5, 0), UsageError);
}

TEST(RowRanges, SplitRangesCutsTheConcatenation) {
  // 12 rows: [0,5) [10,12) [20,25) -> chunks of 4.
  auto s = split_ranges({{0, 5}, {10, 12}, {20, 25}}, 3);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0], (Ranges{{0, 4}}));
  EXPECT_EQ(s[1], (Ranges{{4, 5}, {10, 12}, {20, 21}}));
  EXPECT_EQ(s[2], (Ranges{{21, 25}}));
  // 5 rows over 2: 3 + 2; the empty input range is ignored.
  s = split_ranges({{3, 3}, {7, 9}, {0, 3}}, 2);
  EXPECT_EQ(s[0], (Ranges{{7, 9}, {0, 1}}));
  EXPECT_EQ(s[1], (Ranges{{1, 3}}));
  // More chunks than rows: the tail chunks are empty.
  s = split_ranges({{100, 102}}, 4);
  EXPECT_EQ(s[0], (Ranges{{100, 101}}));
  EXPECT_EQ(s[1], (Ranges{{101, 102}}));
  EXPECT_TRUE(s[2].empty());
  EXPECT_TRUE(s[3].empty());
  s = split_ranges({}, 2);
  EXPECT_TRUE(s[0].empty() && s[1].empty());
}

TEST(RowRanges, DropPrefixAndTotal) {
  const Ranges r{{0, 4}, {10, 12}, {20, 25}};
  EXPECT_EQ(total_rows(r), 11);
  EXPECT_EQ(drop_prefix(r, 0), r);
  EXPECT_EQ(drop_prefix(r, 3), (Ranges{{3, 4}, {10, 12}, {20, 25}}));
  EXPECT_EQ(drop_prefix(r, 4), (Ranges{{10, 12}, {20, 25}}));
  EXPECT_EQ(drop_prefix(r, 7), (Ranges{{21, 25}}));
  EXPECT_EQ(drop_prefix(r, 11), Ranges{});
}

TEST(RowRanges, FreshPlanUsesGlobalWorkerIndex) {
  // 10 rows, world_size 2 x 2 workers: sizes 3, 3, 2, 2.
  EXPECT_EQ(plan_row_ranges(10, 2, 0, 2), (std::vector<Ranges>{{{0, 3}}, {{3, 6}}}));
  EXPECT_EQ(plan_row_ranges(10, 2, 1, 2), (std::vector<Ranges>{{{6, 8}}, {{8, 10}}}));
  EXPECT_EQ(plan_row_ranges(3, 5), (std::vector<Ranges>{{{0, 1}}, {{1, 2}}, {{2, 3}}, {}, {}}));
  EXPECT_EQ(plan_row_ranges(0, 2), (std::vector<Ranges>{{}, {}}));
  EXPECT_THROW(plan_row_ranges(10, 2, 2, 2), UsageError);
}

}  // namespace row_ranges_test
}  // namespace tzrec::data
