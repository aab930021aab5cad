#include "parquet/column_slice.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "parquet/file_reader.h"
#include "parquet/json_rows.h"
#include "parquet/schema.h"
#include "parquet/writer.h"
#include "parquet/testing_util.h"

namespace tzrec::parquet {
namespace column_slice_test {

// Descriptors as the writer builds them (leaf 0 of a one-field file).
ColumnDescriptor descriptor(WriterField f) {
  testing::TempDir dir;
  FileWriter w(dir.file("schema.parquet"), {f});
  ColumnDescriptor d = w.schema().column(0);
  w.close();
  return d;
}

TEST(ColumnSlice, FlatFixedWidthWithNulls) {
  ColumnBuilder b(descriptor({"x", PhysicalType::kInt32}));
  for (int32_t v : {1, 2, 3, 4, 5}) {
    if (v == 3) {
      b.append_null();
    } else {
      b.append(v);
    }
  }
  ColumnData c = b.finish();
  ColumnData s = slice_rows(c, 1, 4);
  EXPECT_EQ(s.num_rows, 3);
  ASSERT_EQ(s.values.size(), 12u);
  EXPECT_EQ(s.data<int32_t>()[0], 2);
  EXPECT_EQ(s.data<int32_t>()[1], 0);
  EXPECT_EQ(s.data<int32_t>()[2], 4);
  EXPECT_EQ(s.validity, (std::vector<uint8_t>{1, 0, 1}));
  append_rows(c, 0, 1, &s);
  EXPECT_EQ(s.num_rows, 4);
  EXPECT_EQ(s.data<int32_t>()[3], 1);
  EXPECT_EQ(s.validity, (std::vector<uint8_t>{1, 0, 1, 1}));
  EXPECT_THROW(slice_rows(c, 2, 6), UsageError);
}

TEST(ColumnSlice, StringsRebaseOffsets) {
  ColumnBuilder b(descriptor({"s", PhysicalType::kByteArray}));
  b.append_string("ab");
  b.append_null();
  b.append_string("");
  b.append_string("cde");
  ColumnData c = b.finish();
  ColumnData s = slice_rows(c, 2, 4);
  EXPECT_EQ(s.offsets, (std::vector<int64_t>{0, 0, 3}));
  EXPECT_EQ(s.bytes(1), "cde");
  append_rows(c, 0, 2, &s);
  EXPECT_EQ(s.offsets, (std::vector<int64_t>{0, 0, 3, 5, 5}));
  EXPECT_EQ(s.bytes(2), "ab");
  EXPECT_EQ(s.validity, (std::vector<uint8_t>{1, 1, 1, 0}));
  EXPECT_EQ(s.num_rows, 4);
}

TEST(ColumnSlice, ListOfListsRebasesEveryLevel) {
  WriterField f{"ll", PhysicalType::kInt64};
  f.list_depth = 2;
  ColumnBuilder b(descriptor(f));
  // row 0: [[1, 2], null]   row 1: null   row 2: []   row 3: [[3], [null, 4]]
  b.begin_list();
  b.begin_list();
  b.append(int64_t{1});
  b.append(int64_t{2});
  b.end_list();
  b.append_null_list();
  b.end_list();
  b.append_null_list();
  b.begin_list();
  b.end_list();
  b.begin_list();
  b.begin_list();
  b.append(int64_t{3});
  b.end_list();
  b.begin_list();
  b.append_null();
  b.append(int64_t{4});
  b.end_list();
  b.end_list();
  ColumnData c = b.finish();
  ColumnData s = slice_rows(c, 2, 4);  // [], [[3], [null, 4]]
  EXPECT_EQ(s.lists[0].offsets, (std::vector<int64_t>{0, 0, 2}));
  EXPECT_EQ(s.lists[0].validity, (std::vector<uint8_t>{1, 1}));
  EXPECT_EQ(s.lists[1].offsets, (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(s.lists[1].validity, (std::vector<uint8_t>{1, 1}));
  EXPECT_EQ(s.validity, (std::vector<uint8_t>{1, 0, 1}));
  ASSERT_EQ(s.num_values(), 3);
  EXPECT_EQ(s.data<int64_t>()[0], 3);
  EXPECT_EQ(s.data<int64_t>()[2], 4);
  append_rows(c, 0, 2, &s);  // + [[1, 2], null], null
  EXPECT_EQ(s.lists[0].offsets, (std::vector<int64_t>{0, 0, 2, 4, 4}));
  EXPECT_EQ(s.lists[0].validity, (std::vector<uint8_t>{1, 1, 1, 0}));
  EXPECT_EQ(s.lists[1].offsets, (std::vector<int64_t>{0, 1, 3, 5, 5}));
  EXPECT_EQ(s.lists[1].validity, (std::vector<uint8_t>{1, 1, 1, 0}));
  EXPECT_EQ(s.validity, (std::vector<uint8_t>{1, 0, 1, 1, 1}));
  EXPECT_EQ(s.data<int64_t>()[3], 1);
  EXPECT_EQ(s.data<int64_t>()[4], 2);
  EXPECT_EQ(s.num_rows, 4);
}

TEST(ColumnSlice, MixedNullabilityMaterializesValidity) {
  WriterField req{"x", PhysicalType::kDouble};
  req.nullable = false;
  ColumnBuilder r(descriptor(req));
  r.append(1.5);
  r.append(2.5);
  ColumnBuilder n(descriptor({"x", PhysicalType::kDouble}));
  n.append_null();
  n.append(3.5);
  ColumnData a = r.finish(), b = n.finish();
  ColumnData s = slice_rows(a, 0, 2);
  EXPECT_TRUE(s.validity.empty());
  append_rows(b, 0, 2, &s);
  EXPECT_EQ(s.validity, (std::vector<uint8_t>{1, 1, 0, 1}));
  append_rows(a, 1, 2, &s);
  EXPECT_EQ(s.validity, (std::vector<uint8_t>{1, 1, 0, 1, 1}));
  EXPECT_EQ(s.data<double>()[4], 2.5);
}

TEST(ColumnSlice, TypeMismatchIsADataError) {
  ColumnBuilder a(descriptor({"x", PhysicalType::kInt32}));
  a.append(int32_t{1});
  ColumnData src = a.finish();
  ColumnData dst = empty_column(descriptor({"x", PhysicalType::kInt64}));
  try {
    append_rows(src, 0, 1, &dst);
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("column 'x' has type INT32"), std::string::npos) << e.what();
  }
}

// Slices keep the definition levels that tell a null struct from a present struct with null
// children (DuckDB-written file; its rows are checked against hyparquet in corpus_test.cc).
TEST(ColumnSlice, KeepsDefinitionLevelsOfNullStructs) {
  auto reader = FileReader::open(std::string(TZREC_SOURCE_DIR) + "/tests/data/parquet-writers/duckdb_nested_decimals.parquet");
  Table full = reader->read();
  ASSERT_FALSE(full.column("s.a").defs.empty());
  for (int64_t b = 0; b < full.num_rows; ++b) {
    for (int64_t e = b; e <= full.num_rows; ++e) {
      Table part;
      part.num_rows = e - b;
      for (const ColumnData& c : full.columns) part.columns.push_back(slice_rows(c, b, e));
      for (int64_t r = b; r < e; ++r) {
        EXPECT_EQ(row_to_json(part, reader->schema(), r - b), row_to_json(full, reader->schema(), r)) << b << " " << e;
      }
    }
  }
  Table part;
  part.num_rows = 1;
  for (const ColumnData& c : full.columns) part.columns.push_back(slice_rows(c, 1, 2));
  EXPECT_EQ(row_to_json(part, reader->schema(), 0)["s"].dump(), R"({"a":null,"b":null})");
}

}  // namespace column_slice_test
}  // namespace tzrec::parquet
