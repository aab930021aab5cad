// take_rows (typed_rows.h): a prefix of a column, then picked rows. Expected rows by hand.
#include "data/typed_rows.h"

#include <gtest/gtest.h>

#include "parquet/writer.h"

namespace tzrec::data {
namespace typed_rows_test {

TEST(TakeRows, TextColumnPrefixThenPicks) {
  StringColumn c;
  c.name = "title";
  for (const char* cell : {"a", "", "ccc"}) c.append(cell);
  const StringColumn all_then = take_rows(c, 3, {2, 0});
  EXPECT_EQ(all_then.name, "title");
  ASSERT_EQ(all_then.size(), 5);
  const std::vector<std::string> want = {"a", "", "ccc", "ccc", "a"};
  for (int64_t r = 0; r < 5; ++r) EXPECT_EQ(all_then.cell(r), want[static_cast<size_t>(r)]) << r;
  const StringColumn picks = take_rows(c, 0, {1, 1, 2});
  ASSERT_EQ(picks.size(), 3);
  EXPECT_EQ(picks.cell(0), "");
  EXPECT_EQ(picks.cell(2), "ccc");
}

TEST(TakeRows, TypedColumnKeepsNulls) {
  const parquet::Schema schema = parquet::writer_schema({{"x", parquet::PhysicalType::kInt64}});
  parquet::ColumnBuilder b(schema.column(0));
  b.append<int64_t>(10);
  b.append_null();
  b.append<int64_t>(30);
  TypedColumn c;
  c.name = "x";
  c.values = b.finish();
  const TypedColumn t = take_rows(c, 1, {2, 1, 0});
  ASSERT_EQ(t.values.num_rows, 4);
  EXPECT_EQ(t.values.data<int64_t>()[0], 10);
  EXPECT_EQ(t.values.data<int64_t>()[1], 30);
  EXPECT_TRUE(t.values.is_null(2));
  EXPECT_EQ(t.values.data<int64_t>()[3], 10);
}

}  // namespace typed_rows_test
}  // namespace tzrec::data
