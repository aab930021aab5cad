// Nested shapes the writer does not produce, from hand-made pages: MAP, the legacy two-level
// list, a bare repeated primitive, a struct, and DATA_PAGE_V2 pages of a repeated column (whose
// row counts let a row-range read skip pages).
#include <gtest/gtest.h>

#include "parquet/file_reader.h"
#include "parquet/json_rows.h"
#include "parquet/rle.h"
#include "parquet/testing_util.h"

namespace tzrec::parquet {
namespace nested_test {

using testing::CraftedColumn;
using testing::CraftedPage;
using testing::schema_group;
using testing::schema_leaf;

std::string rle(const std::vector<int16_t>& levels, int16_t max_level) {
  std::string out;
  int width = 0;
  while ((1 << width) <= max_level) ++width;
  rle_encode(levels.data(), static_cast<int64_t>(levels.size()), width, &out);
  return out;
}

std::string with_length(const std::string& s) {
  uint32_t n = static_cast<uint32_t>(s.size());
  return std::string(reinterpret_cast<const char*>(&n), 4) + s;
}

std::string int32s(std::vector<int32_t> v) { return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4); }

std::string strings(std::vector<std::string> v) {
  std::string out;
  for (auto& s : v) out += with_length(s);
  return out;
}

// DATA_PAGE v1: [rep levels][def levels][values], levels RLE with 4-byte lengths.
CraftedPage v1(std::vector<int16_t> rep, int16_t max_rep, std::vector<int16_t> def, int16_t max_def,
               const std::string& values) {
  CraftedPage p;
  p.header.type = PageType::kDataPage;
  DataPageHeader d;
  d.num_values = static_cast<int32_t>(def.size());
  p.header.data_page_header = d;
  if (max_rep > 0) p.body += with_length(rle(rep, max_rep));
  if (max_def > 0) p.body += with_length(rle(def, max_def));
  p.body += values;
  return p;
}

// DATA_PAGE_V2: levels without lengths (the header has them), values uncompressed.
CraftedPage v2(std::vector<int16_t> rep, int16_t max_rep, std::vector<int16_t> def, int16_t max_def, int32_t rows,
               const std::string& values) {
  CraftedPage p;
  p.header.type = PageType::kDataPageV2;
  DataPageHeaderV2 d;
  d.num_values = static_cast<int32_t>(def.size());
  d.num_rows = rows;
  d.num_nulls = 0;
  for (int16_t x : def) d.num_nulls += x < max_def;
  std::string r = rle(rep, max_rep), l = rle(def, max_def);
  d.repetition_levels_byte_length = static_cast<int32_t>(r.size());
  d.definition_levels_byte_length = static_cast<int32_t>(l.size());
  d.is_compressed = false;
  p.header.data_page_header_v2 = d;
  p.body = r + l + values;
  return p;
}

CraftedColumn column(PhysicalType type, std::vector<std::string> path, std::vector<CraftedPage> pages) {
  CraftedColumn c;
  c.type = type;
  c.path = std::move(path);
  c.pages = std::move(pages);
  for (const auto& p : c.pages) {
    c.num_values += p.header.data_page_header ? p.header.data_page_header->num_values
                                              : p.header.data_page_header_v2->num_values;
  }
  return c;
}

// Rows:
//   0: m={a:1, b:null}  l=[1, 2]  r=[7]     s={a:5, b:"x"}
//   1: m=null           l=null    r=[]      s=null
//   2: m={}             l=[]      r=[8, 9]  s={a:6, b:null}
//   3: m={c:3}          l=[3]     r=[]      s={a:7, b:"y"}
std::string nested_file() {
  using R = Repetition;
  std::vector<SchemaElement> schema = {
      schema_group("schema", 4, std::nullopt),
      schema_group("m", 1, R::kOptional, ConvertedType::kMap),
      schema_group("key_value", 2, R::kRepeated, ConvertedType::kMapKeyValue),
      schema_leaf("key", PhysicalType::kByteArray, R::kRequired, ConvertedType::kUtf8),
      schema_leaf("value", PhysicalType::kInt32, R::kOptional),
      schema_group("l", 1, R::kOptional, ConvertedType::kList),  // legacy two-level list
      schema_leaf("element", PhysicalType::kInt32, R::kRepeated),
      schema_leaf("r", PhysicalType::kInt32, R::kRepeated),      // bare repeated primitive
      schema_group("s", 2, R::kOptional),
      schema_leaf("a", PhysicalType::kInt32, R::kRequired),
      schema_leaf("b", PhysicalType::kByteArray, R::kOptional, ConvertedType::kUtf8),
  };
  std::vector<CraftedColumn> cols = {
      column(PhysicalType::kByteArray, {"m", "key_value", "key"},
             {v1({0, 1, 0, 0, 0}, 1, {2, 2, 0, 1, 2}, 2, strings({"a", "b", "c"}))}),
      column(PhysicalType::kInt32, {"m", "key_value", "value"},
             {v1({0, 1, 0, 0, 0}, 1, {3, 2, 0, 1, 3}, 3, int32s({1, 3}))}),
      column(PhysicalType::kInt32, {"l", "element"}, {v1({0, 1, 0, 0, 0}, 1, {2, 2, 0, 1, 2}, 2, int32s({1, 2, 3}))}),
      column(PhysicalType::kInt32, {"r"},
             {v2({0, 0}, 1, {1, 0}, 1, 2, int32s({7})), v2({0, 1, 0}, 1, {1, 1, 0}, 1, 2, int32s({8, 9}))}),
      column(PhysicalType::kInt32, {"s", "a"}, {v1({}, 0, {1, 0, 1, 1}, 1, int32s({5, 6, 7}))}),
      column(PhysicalType::kByteArray, {"s", "b"}, {v1({}, 0, {2, 0, 1, 2}, 2, strings({"x", "y"}))}),
  };
  return testing::craft_file(schema, cols, 4);
}

const char* kExpectedRows[] = {
    R"({"m":{"a":1,"b":null},"l":[1,2],"r":[7],"s":{"a":5,"b":"x"}})",
    R"({"m":null,"l":null,"r":[],"s":null})",  // both leaves of s have definition level 0: s itself is null
    R"({"m":{},"l":[],"r":[8,9],"s":{"a":6,"b":null}})",
    R"({"m":{"c":3},"l":[3],"r":[],"s":{"a":7,"b":"y"}})",
};

TEST(Nested, MapLegacyListsAndStructs) {
  auto reader = FileReader::open(RandomAccessFile::from_buffer(nested_file(), "nested.parquet"));
  const Schema& schema = reader->schema();
  EXPECT_EQ(schema.field_kind(schema.find_field("m")), FieldKind::kMap);
  EXPECT_EQ(schema.field_kind(schema.find_field("l")), FieldKind::kList);
  EXPECT_EQ(schema.field_kind(schema.find_field("r")), FieldKind::kList);
  EXPECT_EQ(schema.field_kind(schema.find_field("s")), FieldKind::kStruct);
  const ColumnDescriptor& value = schema.column(1);
  EXPECT_EQ(value.path_string, "m.key_value.value");
  EXPECT_EQ(value.max_def, 3);
  EXPECT_EQ(value.max_rep, 1);
  EXPECT_EQ(value.repeated_def, std::vector<int16_t>{2});
  EXPECT_EQ(value.list_nullable, std::vector<bool>{true});
  EXPECT_TRUE(value.leaf_nullable);
  EXPECT_FALSE(schema.column(3).list_nullable[0]);  // r: a bare repeated field is never null
  Table t = reader->read();
  for (int64_t r = 0; r < 4; ++r) EXPECT_EQ(row_to_json(t, schema, r).dump(), kExpectedRows[r]) << "row " << r;
  // The raw layout of the map's value column.
  const ColumnData& v = t.column("m.key_value.value");
  EXPECT_EQ(v.lists[0].offsets, (std::vector<int64_t>{0, 2, 2, 2, 3}));
  EXPECT_EQ(v.lists[0].validity, (std::vector<uint8_t>{1, 0, 1, 1}));
  EXPECT_EQ(v.validity, (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(v.data<int32_t>()[2], 3);
}

TEST(Nested, RowRangesAcrossV2PagesAndV1Levels) {
  auto reader = FileReader::open(RandomAccessFile::from_buffer(nested_file(), "nested.parquet"));
  for (int64_t b = 0; b <= 4; ++b) {
    for (int64_t e = b; e <= 4; ++e) {
      Table t = reader->read(std::vector<std::string>{}, b, e);
      ASSERT_EQ(t.num_rows, e - b);
      for (int64_t r = b; r < e; ++r) {
        EXPECT_EQ(row_to_json(t, reader->schema(), r - b).dump(), kExpectedRows[r]) << "[" << b << ", " << e << ")";
      }
    }
  }
}

TEST(Nested, ContinuationAtChunkStartIsAnError) {
  using R = Repetition;
  std::vector<SchemaElement> schema = {schema_group("schema", 1, std::nullopt),
                                       schema_leaf("r", PhysicalType::kInt32, R::kRepeated)};
  auto file = testing::craft_file(schema, {column(PhysicalType::kInt32, {"r"}, {v1({1, 0}, 1, {1, 1}, 1, int32s({1, 2}))})}, 2);
  auto reader = FileReader::open(RandomAccessFile::from_buffer(file, "cont.parquet"));
  try {
    reader->read();
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("does not start a row"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("column 'r'"), std::string::npos) << e.what();
  }
}

}  // namespace nested_test
}  // namespace tzrec::parquet
