// Decoding of SID columns (retrieval/sid_codes.h): the rules of TorchEasyRec's
// evaluate_sid_quality.decode_codes (a list of integers, or text parsed with Python's int()),
// on columns built by hand.
#include "retrieval/sid_codes.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "parquet/writer.h"

namespace tzrec::retrieval {
namespace sid_codes_test {

using parquet::PhysicalType;

TEST(SidCodes, PythonIntLiterals) {
  int64_t v = 0;
  // Python: int(" 12 ") == 12, int("+3") == 3, int("1_000") == 1000.
  EXPECT_TRUE(parse_python_int(" 12 ", &v));
  EXPECT_EQ(v, 12);
  EXPECT_TRUE(parse_python_int("+3", &v));
  EXPECT_EQ(v, 3);
  EXPECT_TRUE(parse_python_int("-4", &v));
  EXPECT_EQ(v, -4);
  EXPECT_TRUE(parse_python_int("1_000", &v));
  EXPECT_EQ(v, 1000);
  EXPECT_TRUE(parse_python_int("9223372036854775807", &v));
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_TRUE(parse_python_int("-9223372036854775808", &v));
  EXPECT_EQ(v, INT64_MIN);
  // int() raises for these (or the value is outside int64).
  for (const char* bad : {"", " ", "+", "1__0", "_1", "1_", "1.0", "1e3", "0x10", "1 2", "9223372036854775808"}) {
    EXPECT_FALSE(parse_python_int(bad, &v)) << bad;
  }
}

data::TypedColumn list_column(const std::string& name, PhysicalType type,
                              const std::vector<std::optional<std::vector<std::optional<int64_t>>>>& rows) {
  const parquet::Schema schema = parquet::writer_schema({parquet::WriterField{name, type, true, 1, true}});
  parquet::ColumnBuilder b(schema.column(0));
  for (const auto& row : rows) {
    if (!row) {
      b.append_null_list();
      continue;
    }
    b.begin_list();
    for (const auto& v : *row) {
      if (!v) {
        b.append_null();
      } else if (type == PhysicalType::kInt32) {
        b.append<int32_t>(static_cast<int32_t>(*v));
      } else if (type == PhysicalType::kDouble) {
        b.append<double>(static_cast<double>(*v));
      } else {
        b.append<int64_t>(*v);
      }
    }
    b.end_list();
  }
  return {name, b.finish(), std::nullopt};
}

data::RecordBatch batch_of(data::TypedColumn column) {
  data::RecordBatch b;
  b.origins.resize(static_cast<size_t>(column.values.num_rows));
  b.files = {"items.parquet"};
  b.origin_unit = "row";
  b.typed_columns.push_back(std::move(column));
  return b;
}

TEST(SidCodes, IntegerLists) {
  for (PhysicalType type : {PhysicalType::kInt32, PhysicalType::kInt64}) {
    const data::RecordBatch b = batch_of(list_column(
        "codes", type, {{{{1}, {2}, {3}}}, std::nullopt, {{{1}, {2}}}, {{{1}, std::nullopt, {3}}}, {{{-7}, {0}, {9}}}}));
    const SidCodeRows r = decode_sid_codes(b, "codes", 3);
    EXPECT_EQ(r.valid, (std::vector<uint8_t>{1, 0, 0, 0, 1}));
    EXPECT_EQ(r.values, (std::vector<int64_t>{1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, -7, 0, 9}));
  }
}

TEST(SidCodes, RowsOutsideTheCodebookAndWhy) {
  const int64_t in[] = {3, 0}, out[] = {3, 3}, negative[] = {-1, 0};
  EXPECT_EQ(first_code_out_of_range(in, {4, 3}), -1);
  EXPECT_EQ(first_code_out_of_range(out, {4, 3}), 1);
  EXPECT_EQ(first_code_out_of_range(negative, {4, 3}), 0);
  // Rows: in range, malformed (two codes), layer 1 out of range.
  const data::RecordBatch b =
      batch_of(list_column("codes", PhysicalType::kInt64, {{{{3}, {0}}}, {{{1}}}, {{{1}, {3}}}}));
  const SidCodeRows r = decode_sid_codes(b, "codes", 2);
  EXPECT_EQ(sid_row_problem(r, 0, {4, 3}), "");
  EXPECT_EQ(sid_row_problem(r, 1, {4, 3}),
            "does not hold 2 integer codes (null, a null code, another count or a non-integer)");
  EXPECT_EQ(sid_row_problem(r, 2, {4, 3}), "code 3 of layer 1 is outside its codebook [0, 3)");
}

TEST(SidCodes, ListsOfOtherTypesAreAnError) {
  const data::RecordBatch b = batch_of(list_column("codes", PhysicalType::kDouble, {{{{1}, {2}}}}));
  try {
    decode_sid_codes(b, "codes", 2);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("items.parquet: column 'codes' is a list of DOUBLE; SID codes must be integers"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(decode_sid_codes(b, "sid", 2), DataError);  // no such column
}

TEST(SidCodes, TextCells) {
  data::RecordBatch b;
  data::StringColumn c{"codes"};
  for (const char* cell : {"1,2,3", " 4 , +5,6_0", "1,2", "1,2,3,4", "", "1,x,3", "1,,3"}) c.append(cell);
  b.columns.push_back(c);
  b.origins.resize(7);
  const SidCodeRows r = decode_sid_codes(b, "codes", 3);
  EXPECT_EQ(r.valid, (std::vector<uint8_t>{1, 1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(std::vector<int64_t>(r.row(1), r.row(1) + 3), (std::vector<int64_t>{4, 5, 60}));
}

TEST(SidCodes, Scalars) {
  const parquet::Schema ints = parquet::writer_schema({parquet::WriterField{"code", PhysicalType::kInt64}});
  parquet::ColumnBuilder i(ints.column(0));
  i.append<int64_t>(5);
  i.append_null();
  const SidCodeRows one = decode_sid_codes(batch_of({"code", i.finish(), std::nullopt}), "code", 1);
  EXPECT_EQ(one.valid, (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(one.values[0], 5);

  const parquet::Schema doubles = parquet::writer_schema({parquet::WriterField{"code", PhysicalType::kDouble}});
  parquet::ColumnBuilder d(doubles.column(0));
  d.append<double>(5.0);
  d.append<double>(5.5);
  const SidCodeRows whole = decode_sid_codes(batch_of({"code", d.finish(), std::nullopt}), "code", 1);
  EXPECT_EQ(whole.valid, (std::vector<uint8_t>{1, 0}));

  const parquet::Schema text = parquet::writer_schema({parquet::WriterField{"code", PhysicalType::kByteArray}});
  parquet::ColumnBuilder t(text.column(0));
  t.append_string("3,4");
  t.append_null();
  const SidCodeRows strings = decode_sid_codes(batch_of({"code", t.finish(), std::nullopt}), "code", 2);
  EXPECT_EQ(strings.valid, (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(strings.values[1], 4);
}

}  // namespace sid_codes_test
}  // namespace tzrec::retrieval
