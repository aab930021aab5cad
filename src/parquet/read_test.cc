// Reader features on files written by our writer: row ranges (skipping row groups and pages),
// projection, row-group streaming, multi-threaded decoding.
#include <gtest/gtest.h>

#include "parquet/describe.h"
#include "parquet/file_reader.h"
#include "parquet/json_rows.h"
#include "parquet/testing_util.h"
#include "parquet/writer.h"

namespace tzrec::parquet {
namespace read_test {

using testing::CountingFile;
using testing::TempDir;

constexpr int64_t kRows = 5000;

std::vector<WriterField> fields() {
  std::vector<WriterField> f(4);
  f[0] = {"id", PhysicalType::kInt64, false};
  f[1] = {"name", PhysicalType::kByteArray};
  f[2] = {"ids", PhysicalType::kInt64, true, 1, true};
  f[3] = {"score", PhysicalType::kFloat};
  return f;
}

Table make_id_name_list_rows(const Schema& schema, int64_t begin, int64_t end) {
  std::vector<ColumnBuilder> b;
  for (int c = 0; c < schema.num_columns(); ++c) b.emplace_back(schema.column(c));
  for (int64_t i = begin; i < end; ++i) {
    b[0].append<int64_t>(i);
    if (i % 17 == 0) b[1].append_null(); else b[1].append_string("n" + std::to_string(i % 300));
    if (i % 23 == 0) {
      b[2].append_null_list();
    } else {
      b[2].begin_list();
      for (int64_t k = 0; k < i % 4; ++k) b[2].append<int64_t>(i + k);
      b[2].end_list();
    }
    if (i % 5 == 1) b[3].append_null(); else b[3].append<float>(static_cast<float>(i) / 8);
  }
  Table t;
  t.num_rows = end - begin;
  for (auto& x : b) t.columns.push_back(x.finish());
  return t;
}

class ReadTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    path_ = dir_->file("rows.parquet");
    WriterOptions options;
    options.row_group_rows = 1000;
    options.page_bytes = 800;            // several pages per column chunk
    options.dictionary_max_bytes = 2500;  // dictionaries only for "name" and "score"
    FileWriter w(path_, fields(), options);
    w.write(make_id_name_list_rows(w.schema(), 0, kRows));
    w.close();
  }
  static void TearDownTestSuite() { delete dir_; }

  static TempDir* dir_;
  static std::string path_;
};

TempDir* ReadTest::dir_ = nullptr;
std::string ReadTest::path_;

TEST_F(ReadTest, RowRangesEqualTheWrittenRows) {
  for (bool use_index : {true, false}) {
    ReaderOptions options;
    options.use_offset_index = use_index;
    auto reader = FileReader::open(path_, options);
    ASSERT_EQ(reader->num_row_groups(), 5);
    for (auto [b, e] : std::vector<std::pair<int64_t, int64_t>>{
             {0, kRows}, {0, 1}, {999, 1001}, {1234, 3456}, {4999, kRows}, {2500, 2500}, {3000, 4000}, {17, 18}}) {
      Table got = reader->read(std::vector<std::string>{}, b, e);
      ASSERT_EQ(got.num_rows, e - b);
      Table want = make_id_name_list_rows(reader->schema(), b, e);
      for (size_t c = 0; c < got.columns.size(); ++c) {
        testing::expect_same_column(got.columns[c], want.columns[c],
                                    got.columns[c].name() + " [" + std::to_string(b) + ", " + std::to_string(e) + ")");
      }
    }
  }
}

TEST_F(ReadTest, SmallRangesReadOnlyTheirRowGroupAndPages) {
  const int64_t file_size = RandomAccessFile::open(path_)->size();
  int64_t bytes[2];
  for (bool use_index : {true, false}) {
    auto counting = std::make_shared<CountingFile>(RandomAccessFile::open(path_));
    ReaderOptions options;
    options.use_offset_index = use_index;
    auto reader = FileReader::open(counting, options);
    counting->reset();
    Table t = reader->read(std::vector<std::string>{}, 2345, 2350);
    EXPECT_EQ(t.columns[0].data<int64_t>()[0], 2345);
    bytes[use_index] = counting->bytes_read();
  }
  // Without the page index: the chunks of one row group of five (about a fifth of the file).
  EXPECT_LT(bytes[0], file_size / 4);
  EXPECT_GT(bytes[0], file_size / 10);
  // With it: the two small dictionaries plus one page per column.
  EXPECT_LT(bytes[1], bytes[0] / 2);
}

TEST_F(ReadTest, ProjectionByFieldAndLeafPath) {
  auto reader = FileReader::open(path_);
  Table t = reader->read({"score", "ids"}, 10, 20);
  ASSERT_EQ(t.columns.size(), 2u);
  EXPECT_EQ(t.columns[0].name(), "score");
  EXPECT_EQ(t.columns[1].name(), "ids.list.element");
  EXPECT_EQ(&t.column("ids"), &t.columns[1]);
  EXPECT_EQ(&t.column("ids.list.element"), &t.columns[1]);
  EXPECT_EQ(t.find("id"), nullptr);
  EXPECT_THROW(t.column("id"), DataError);
  Table leaf = reader->read({"ids.list.element"}, 10, 20);
  testing::expect_same_column(leaf.columns[0], t.columns[1], "leaf path");
  try {
    reader->read({"nope"});
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("'nope' not found"), std::string::npos) << msg;
    EXPECT_NE(msg.find("id, name, ids, score"), std::string::npos) << msg;
    EXPECT_NE(msg.find("rows.parquet"), std::string::npos) << msg;
  }
  EXPECT_THROW(reader->read(std::vector<std::string>{}, 10, kRows + 1), DataError);
  EXPECT_THROW(reader->read(std::vector<std::string>{}, 20, 10), DataError);
}

TEST_F(ReadTest, StreamYieldsRowGroupSlices) {
  auto reader = FileReader::open(path_);
  std::vector<int> cols = reader->resolve_columns({"id", "ids"});
  RowGroupStream stream(reader.get(), cols, 1500, 4200);
  std::vector<int64_t> sizes;
  int64_t next_id = 1500;
  while (auto t = stream.next()) {
    sizes.push_back(t->num_rows);
    const int64_t* id = t->columns[0].data<int64_t>();
    for (int64_t r = 0; r < t->num_rows; ++r) ASSERT_EQ(id[r], next_id++);
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{500, 1000, 1000, 200}));
  EXPECT_EQ(stream.position(), 4200);
  EXPECT_FALSE(stream.next().has_value());
}

TEST_F(ReadTest, StreamIntoOneTableEqualsTheWrittenRows) {
  auto reader = FileReader::open(path_);
  const std::vector<int> cols = reader->resolve_columns({});
  RowGroupStream stream(reader.get(), cols, 700, 4300);
  Table reused;
  int64_t begin = 700;
  int chunks = 0;
  while (stream.next(&reused)) {
    const int64_t end = begin + reused.num_rows;
    const Table want = make_id_name_list_rows(reader->schema(), begin, end);
    ASSERT_EQ(reused.columns.size(), want.columns.size());
    for (size_t c = 0; c < reused.columns.size(); ++c) {
      testing::expect_same_column(reused.columns[c], want.columns[c],
                                  reused.columns[c].name() + " from row " + std::to_string(begin));
    }
    // A column moved out (a batch taking a whole row group) is filled again by the next chunk.
    if (++chunks == 2) {
      const ColumnData taken = std::move(reused.columns[1]);
      EXPECT_EQ(taken.num_rows, reused.num_rows);
    }
    begin = end;
  }
  EXPECT_EQ(chunks, 5);
  EXPECT_EQ(begin, 4300);
}

TEST_F(ReadTest, ThreadsGiveTheSameResult) {
  ReaderOptions one, four;
  four.num_threads = 4;
  Table a = FileReader::open(path_, one)->read();
  Table b = FileReader::open(path_, four)->read();
  for (size_t c = 0; c < a.columns.size(); ++c) testing::expect_same_column(a.columns[c], b.columns[c], a.columns[c].name());
}

TEST_F(ReadTest, RowsAsJson) {
  auto reader = FileReader::open(path_);
  Table t = reader->read(std::vector<std::string>{}, 23, 25);
  EXPECT_EQ(row_to_json(t, reader->schema(), 0).dump(), R"({"id":23,"name":"n23","ids":null,"score":2.875})");
  EXPECT_EQ(row_to_json(t, reader->schema(), 1).dump(), R"({"id":24,"name":"n24","ids":[],"score":3.0})");
  JsonOptions strings;
  strings.int64_as_string = true;
  EXPECT_EQ(row_to_json(t, reader->schema(), 0, strings)["id"], "23");
}

TEST_F(ReadTest, DescribeNamesSchemaRowGroupsAndChunks) {
  std::string d = describe_file(*FileReader::open(path_));
  for (const char* part : {"rows: 5000", "row groups: 5", "optional group ids (LIST)", "repeated group list",
                           "optional int64 element", "row group 4: rows=1000 first_row=4000",
                           "ids.list.element: INT64 codec=SNAPPY", "RLE_DICTIONARY", "offset_index",
                           "created_by: tzrec-cpp version "}) {
    EXPECT_NE(d.find(part), std::string::npos) << part << " not in:\n" << d;
  }
}

TEST(Json, Iso8601) {
  EXPECT_EQ(iso8601_millis(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(iso8601_millis(1230768060000), "2009-01-01T00:01:00.000Z");
  EXPECT_EQ(iso8601_millis(-1), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(iso8601_millis(951782400000), "2000-02-29T00:00:00.000Z");
}

}  // namespace read_test
}  // namespace tzrec::parquet
