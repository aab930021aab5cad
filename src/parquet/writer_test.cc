// Writer round trips: what FileWriter writes, FileReader reads back exactly (every codec the
// writer supports, dictionary and PLAIN, nulls, empty and null lists, lists of lists, int64
// extremes, several row groups fed by several write() calls), and an independent Python decoder
// (independent_check.py, standard library only) agrees on the footer and the INT64 values.
#include <cmath>
#include <cstdlib>
#include <limits>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "parquet/file_reader.h"
#include "parquet/testing_util.h"
#include "parquet/writer.h"

namespace tzrec::parquet {
namespace writer_test {

using testing::TempDir;

std::vector<WriterField> test_fields() {
  std::vector<WriterField> f(9);
  f[0] = {"i32", PhysicalType::kInt32};
  f[1] = {"i64", PhysicalType::kInt64, /*nullable=*/false};
  f[2] = {"f32", PhysicalType::kFloat};
  f[3] = {"f64", PhysicalType::kDouble, false};
  f[4] = {"flag", PhysicalType::kBoolean};
  f[5] = {"name", PhysicalType::kByteArray};
  f[6] = {"ids", PhysicalType::kInt64, true, /*list_depth=*/1, /*element_nullable=*/true};
  f[7] = {"tags", PhysicalType::kByteArray, false, 1, false};
  f[8] = {"seq", PhysicalType::kInt32, true, 2, true};
  return f;
}

const int64_t kInt64Specials[] = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), -1, 0,
                                  std::numeric_limits<int64_t>::min() + 1};

// Row i of the test data (deterministic; mixes low-cardinality columns, which get dictionaries,
// with unique ones).
void add_row(int64_t i, std::vector<ColumnBuilder>& b) {
  std::mt19937_64 rng(static_cast<uint64_t>(i) * 7919 + 17);
  if (i % 7 == 3) b[0].append_null(); else b[0].append<int32_t>(static_cast<int32_t>(i % 50) - 25);
  b[1].append<int64_t>(i < 5 ? kInt64Specials[i] : static_cast<int64_t>(rng()));
  if (i % 5 == 0) b[2].append_null(); else b[2].append<float>(static_cast<float>(i) * 0.25f);
  b[3].append<double>(i == 1 ? std::nan("") : static_cast<double>(rng() % 1000) / 7.0);
  if (i % 3 == 0) b[4].append_null(); else b[4].append(i % 2 == 0);
  if (i % 11 == 0) b[5].append_null();
  else if (i % 13 == 0) b[5].append_string("");
  else b[5].append_string("name_" + std::to_string(i % 40));
  // ids: null list, empty list, or 1..4 elements with some nulls.
  if (i % 9 == 0) {
    b[6].append_null_list();
  } else {
    b[6].begin_list();
    for (int64_t k = 0; k < i % 5; ++k) {
      if ((i + k) % 6 == 0) b[6].append_null(); else b[6].append<int64_t>(i * 100 + k);
    }
    b[6].end_list();
  }
  b[7].begin_list();
  for (int64_t k = 0; k < (i % 4); ++k) b[7].append_string(std::string(static_cast<size_t>(k + 1), static_cast<char>('a' + i % 26)));
  b[7].end_list();
  // seq: list<list<int32>> with null and empty inner lists.
  if (i % 10 == 0) {
    b[8].append_null_list();
  } else {
    b[8].begin_list();
    for (int64_t k = 0; k < i % 3; ++k) {
      if (k == 1 && i % 4 == 0) {
        b[8].append_null_list();
        continue;
      }
      b[8].begin_list();
      for (int64_t m = 0; m < (i + k) % 3; ++m) {
        if (m == 2) b[8].append_null(); else b[8].append<int32_t>(static_cast<int32_t>(i * 10 + m));
      }
      b[8].end_list();
    }
    b[8].end_list();
  }
}

Table make_rows(const Schema& schema, int64_t begin, int64_t end) {
  std::vector<ColumnBuilder> b;
  for (int c = 0; c < schema.num_columns(); ++c) b.emplace_back(schema.column(c));
  for (int64_t i = begin; i < end; ++i) add_row(i, b);
  Table t;
  t.num_rows = end - begin;
  for (auto& x : b) t.columns.push_back(x.finish());
  return t;
}

struct Case {
  Compression codec;
  bool dictionary;
  int64_t row_group_rows;
};

class WriterRoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(WriterRoundTrip, ReadsBackExactly) {
  const Case& c = GetParam();
  TempDir dir;
  const std::string path = dir.file("t.parquet");
  const int64_t n = 1000;
  WriterOptions options;
  options.compression = c.codec;
  options.dictionary = c.dictionary;
  options.row_group_rows = c.row_group_rows;
  options.page_bytes = 512;  // many pages per chunk
  options.num_threads = 2;
  options.key_value_metadata = {{"origin", std::string("writer_test")}};
  {
    FileWriter w(path, test_fields(), options);
    // Three writes of uneven sizes, so that row groups straddle them.
    w.write(make_rows(w.schema(), 0, 123));
    w.write(make_rows(w.schema(), 123, 124));
    w.write(make_rows(w.schema(), 124, n));
    w.close();
    EXPECT_EQ(w.rows_written(), n);
  }
  auto reader = FileReader::open(path);
  EXPECT_EQ(reader->num_rows(), n);
  EXPECT_EQ(reader->num_row_groups(), (n + c.row_group_rows - 1) / c.row_group_rows);
  EXPECT_EQ(reader->metadata().created_by.value_or(""), std::string("tzrec-cpp version ") + kVersion);
  ASSERT_EQ(reader->metadata().key_value_metadata.size(), 1u);
  EXPECT_EQ(reader->metadata().key_value_metadata[0].key, "origin");
  Table got = reader->read();
  Table want = make_rows(reader->schema(), 0, n);
  ASSERT_EQ(got.columns.size(), want.columns.size());
  for (size_t i = 0; i < got.columns.size(); ++i) {
    testing::expect_same_column(got.columns[i], want.columns[i], got.columns[i].name());
  }
  // Dictionary encoding is used when asked for (on the low-cardinality "i32"), never otherwise.
  const auto& encs = reader->metadata().row_groups[0].columns[0].meta_data.encodings;
  bool has_dict = std::find(encs.begin(), encs.end(), Encoding::kRleDictionary) != encs.end();
  EXPECT_EQ(has_dict, c.dictionary);
  EXPECT_EQ(reader->metadata().row_groups[0].columns[0].meta_data.codec, c.codec);
}

INSTANTIATE_TEST_SUITE_P(
    Codecs, WriterRoundTrip,
    ::testing::Values(Case{Compression::kUncompressed, false, 1000}, Case{Compression::kUncompressed, true, 37},
                      Case{Compression::kSnappy, true, 1000}, Case{Compression::kSnappy, false, 37},
                      Case{Compression::kZstd, true, 256}, Case{Compression::kZstd, false, 1000},
                      Case{Compression::kGzip, true, 100}, Case{Compression::kGzip, false, 999}));

TEST(Writer, DictionaryFallsBackToPlainWhenTooLarge) {
  TempDir dir;
  const std::string path = dir.file("t.parquet");
  WriterOptions options;
  options.dictionary_max_bytes = 64;
  {
    FileWriter w(path, test_fields(), options);
    w.write(make_rows(w.schema(), 0, 300));
    w.close();
  }
  auto reader = FileReader::open(path);
  // "i64" is unique per row: its dictionary passes 64 bytes, so it is PLAIN.
  const auto& encs = reader->metadata().row_groups[0].columns[1].meta_data.encodings;
  EXPECT_EQ(std::find(encs.begin(), encs.end(), Encoding::kRleDictionary), encs.end());
  Table got = reader->read();
  Table want = make_rows(reader->schema(), 0, 300);
  for (size_t i = 0; i < got.columns.size(); ++i) {
    testing::expect_same_column(got.columns[i], want.columns[i], got.columns[i].name());
  }
}

TEST(Writer, RejectsInputThatDoesNotMatchTheFields) {
  TempDir dir;
  FileWriter w(dir.file("t.parquet"), test_fields());
  Table t = make_rows(w.schema(), 0, 10);
  Table wrong_count = t;
  wrong_count.columns.pop_back();
  EXPECT_THROW(w.write(wrong_count), DataError);
  Table null_in_required = t;
  null_in_required.columns[1].validity.assign(10, 1);
  null_in_required.columns[1].validity[3] = 0;
  try {
    w.write(null_in_required);
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("'i64'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not nullable"), std::string::npos) << e.what();
  }
  Table bad_offsets = t;
  bad_offsets.columns[6].lists[0].offsets[2] = 1000;
  EXPECT_THROW(w.write(bad_offsets), DataError);
  ColumnBuilder b(w.schema().column(1));
  EXPECT_THROW(b.append<int32_t>(1), DataError);  // INT64 column
  EXPECT_THROW(b.append_null(), DataError);       // required
  w.close();
}

TEST(Writer, EmptyFileHasNoRowGroups) {
  TempDir dir;
  const std::string path = dir.file("empty.parquet");
  {
    FileWriter w(path, test_fields());
    w.close();
  }
  auto reader = FileReader::open(path);
  EXPECT_EQ(reader->num_rows(), 0);
  EXPECT_EQ(reader->num_row_groups(), 0);
  Table t = reader->read();
  EXPECT_EQ(t.num_rows, 0);
  EXPECT_EQ(t.columns.size(), 9u);
}

// The independent decoder (Python standard library, written from the spec) reads our footer and
// the PLAIN INT64 values of UNCOMPRESSED and GZIP files.
TEST(Writer, IndependentPythonDecoderAgrees) {
  for (Compression codec : {Compression::kUncompressed, Compression::kGzip}) {
    TempDir dir;
    const std::string path = dir.file("t.parquet");
    WriterOptions options;
    options.compression = codec;
    options.dictionary = false;
    options.row_group_rows = 400;
    options.page_bytes = 1000;
    {
      FileWriter w(path, test_fields(), options);
      w.write(make_rows(w.schema(), 0, 1000));
      w.close();
    }
    std::string script = std::string(TZREC_SOURCE_DIR) + "/src/parquet/independent_check.py";
    std::string out_path = dir.file("check.json");
    std::string cmd = "/usr/bin/python3 " + script + " " + path + " > " + out_path;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    auto j = nlohmann::json::parse(testing::read_file(out_path));
    EXPECT_EQ(j["num_rows"], 1000);
    EXPECT_EQ(j["created_by"], std::string("tzrec-cpp version ") + kVersion);
    EXPECT_EQ(j["fields"], nlohmann::json({"i32", "i64", "f32", "f64", "flag", "name", "ids", "tags", "seq"}));
    EXPECT_EQ(j["row_groups"], nlohmann::json({400, 400, 200}));
    auto values = j["int64_columns"]["i64"].get<std::vector<int64_t>>();
    ASSERT_EQ(values.size(), 1000u);
    Table want = make_rows(FileReader::open(path)->schema(), 0, 1000);
    const int64_t* v = want.columns[1].data<int64_t>();
    for (size_t i = 0; i < values.size(); ++i) ASSERT_EQ(values[i], v[i]) << "row " << i;
    EXPECT_EQ(values[0], std::numeric_limits<int64_t>::min());
    EXPECT_EQ(values[1], std::numeric_limits<int64_t>::max());
  }
}

}  // namespace writer_test
}  // namespace tzrec::parquet

namespace tzrec::parquet {
namespace writer_test {

// integer_bits annotates INT32 leaves as Arrow's narrow integers (uint8 of a delta embedding dump's
// INT8 rows): the footer carries UINT_8 and INTEGER(8, unsigned), which the reader gives back.
TEST(Writer, NarrowIntegerAnnotation) {
  TempDir dir;
  const std::string path = dir.file("u8.parquet");
  WriterField codes{"codes", PhysicalType::kInt32, true, 1};
  codes.integer_bits = 8;
  codes.integer_signed = false;
  WriterField small{"small", PhysicalType::kInt32};
  small.integer_bits = 16;
  {
    FileWriter w(path, {codes, small});
    ColumnBuilder c(w.schema().column(0)), s(w.schema().column(1));
    c.begin_list();
    c.append<int32_t>(0);
    c.append<int32_t>(255);
    c.end_list();
    s.append<int32_t>(-7);
    Table t;
    t.num_rows = 1;
    t.columns = {c.finish(), s.finish()};
    w.write(t);
    w.close();
  }
  auto reader = FileReader::open(path);
  const ColumnDescriptor& d0 = reader->schema().column(0);
  EXPECT_EQ(d0.converted_type, ConvertedType::kUint8);
  EXPECT_EQ(d0.logical_type.kind, LogicalType::Kind::kInteger);
  EXPECT_EQ(d0.logical_type.bit_width, 8);
  EXPECT_FALSE(d0.logical_type.is_signed);
  const ColumnDescriptor& d1 = reader->schema().column(1);
  EXPECT_EQ(d1.converted_type, ConvertedType::kInt16);
  EXPECT_TRUE(d1.logical_type.is_signed);
  WriterField bad{"bad", PhysicalType::kFloat};
  bad.integer_bits = 8;
  EXPECT_THROW(FileWriter(dir.file("bad.parquet"), {bad}), DataError);
}

}  // namespace writer_test
}  // namespace tzrec::parquet
