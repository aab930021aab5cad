// csv_value_types (data/csv_value_types.h): the expected types are what pyarrow's read_csv infers
// for such columns (int64 for integers with null spellings among them, double once a cell is a
// non-integer number, string once a cell is no number), and its null spellings.
#include "data/csv_value_types.h"

#include <gtest/gtest.h>

namespace tzrec::data {
namespace csv_value_types_test {

using Cells = std::vector<std::string_view>;

TEST(CsvValueTypes, InferredAsPyarrow) {
  EXPECT_EQ(infer_csv_value_type(Cells{"1", "-2", "+3", "", "NULL", "nan"}), CsvValueType::kInt64);
  EXPECT_EQ(infer_csv_value_type(Cells{"1", "2.5", "N/A", "1e-5"}), CsvValueType::kDouble);
  EXPECT_EQ(infer_csv_value_type(Cells{"1", "2.5", "x"}), CsvValueType::kString);
  EXPECT_EQ(infer_csv_value_type(Cells{"1;2"}), CsvValueType::kString);
  EXPECT_EQ(infer_csv_value_type(Cells{"9223372036854775808"}), CsvValueType::kDouble);  // beyond int64
  EXPECT_TRUE(csv_null_text("#N/A N/A"));
  EXPECT_FALSE(csv_null_text("None"));
}

TEST(CsvValueTypes, TypedColumnsKeepRowsAndNulls) {
  StringColumn ints{"a", {}, {0}};
  for (const char* c : {"7", "", "-1"}) ints.append(c);
  const TypedColumn a = typed_csv_column(ints);
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.values.type(), parquet::PhysicalType::kInt64);
  ASSERT_EQ(a.values.num_rows, 3);
  EXPECT_EQ(a.values.data<int64_t>()[0], 7);
  EXPECT_TRUE(a.values.is_null(1));
  EXPECT_EQ(a.values.data<int64_t>()[2], -1);

  StringColumn doubles{"d", {}, {0}};
  for (const char* c : {"0.5", "NaN", "3"}) doubles.append(c);
  const TypedColumn d = typed_csv_column(doubles);
  EXPECT_EQ(d.values.type(), parquet::PhysicalType::kDouble);
  EXPECT_EQ(d.values.data<double>()[0], 0.5);
  EXPECT_TRUE(d.values.is_null(1));
  EXPECT_EQ(d.values.data<double>()[2], 3.0);

  StringColumn text{"s", {}, {0}};
  for (const char* c : {"x", "", "2"}) text.append(c);
  const TypedColumn s = typed_csv_column(text);
  EXPECT_TRUE(s.values.descriptor.is_string());
  EXPECT_EQ(s.values.bytes(0), "x");
  EXPECT_FALSE(s.values.is_null(1));  // strings stay as they are: "" is an empty string
  EXPECT_EQ(s.values.bytes(1), "");
  EXPECT_EQ(s.values.bytes(2), "2");
}

}  // namespace csv_value_types_test
}  // namespace tzrec::data
