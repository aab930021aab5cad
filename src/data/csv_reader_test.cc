#include "data/csv_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "data/testing_util.h"

namespace tzrec::data {
namespace csv_reader_test {

using testing::TempDir;
using Strings = std::vector<std::string>;

Strings column(const RecordBatch& b, const std::string& name) {
  const int c = b.column_index(name);
  EXPECT_GE(c, 0) << name;
  Strings out;
  for (int64_t r = 0; r < b.num_rows(); ++r) out.emplace_back(b.columns[c].cell(r));
  return out;
}

std::vector<FileSlice> slices(const Strings& paths) {
  std::vector<FileSlice> out;
  for (size_t i = 0; i < paths.size(); ++i)
    out.push_back(FileSlice{paths[i], static_cast<int32_t>(i), 0});
  return out;
}

CsvOptions header_opts() {
  CsvOptions o;
  o.with_header = true;
  return o;
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(CsvBatchReader, HeaderSelectsAndOrdersColumns) {
  CsvBatchReader r(header_opts(), {"note", "id"},
                   slices({testing::fixture("tests/data/csv/quoted_crlf.csv")}), 10, false);
  auto b = r.next();
  ASSERT_TRUE(b);
  const RecordBatch& rb = b->records;
  ASSERT_EQ(rb.columns.size(), 2u);
  EXPECT_EQ(rb.columns[0].name, "note");
  EXPECT_EQ(rb.columns[1].name, "id");
  EXPECT_EQ(column(rb, "id"), (Strings{"1", "2", "3", "4"}));
  EXPECT_EQ(column(rb, "note"), (Strings{"said \"hi\"", "two\r\nlines", "x", "last"}));
  EXPECT_EQ(rb.describe_row(0), testing::fixture("tests/data/csv/quoted_crlf.csv") + " line 2");
  EXPECT_EQ(rb.origins[2].line, 5);
  EXPECT_FALSE(r.next());
}

TEST(CsvBatchReader, InputFieldsNameColumnsWithoutHeader) {
  CsvOptions o;
  o.delimiter = '\t';
  o.input_fields = {"id", "cat", "price"};
  CsvBatchReader r(o, {"price", "cat"}, slices({testing::fixture("tests/data/csv/no_header.tsv")}),
                   2, false);
  auto b1 = r.next();
  ASSERT_TRUE(b1);
  EXPECT_EQ(column(b1->records, "price"), (Strings{"0.5", "1.5"}));
  EXPECT_EQ(column(b1->records, "cat"), (Strings{"a", "b"}));
  auto b2 = r.next();
  ASSERT_TRUE(b2);
  EXPECT_EQ(column(b2->records, "cat"), (Strings{""}));  // empty cell = null
  EXPECT_EQ(b2->records.origins[0].line, 4);
  EXPECT_FALSE(r.next());
}

TEST(CsvBatchReader, BatchesSpanFilesAndKeepOrDropRemainder) {
  TempDir dir;
  Strings paths = {dir.write("a.csv", "v\n1\n2\n3\n"), dir.write("b.csv", "v\n4\n5\n"),
                   dir.write("c.csv", ""), dir.write("d.csv", "v\n6\n7\n8\n9\n10\n")};
  for (bool drop : {false, true}) {
    CsvBatchReader r(header_opts(), {"v"}, slices(paths), 4, drop);
    auto b1 = r.next();
    ASSERT_TRUE(b1);
    EXPECT_EQ(column(b1->records, "v"), (Strings{"1", "2", "3", "4"}));
    EXPECT_EQ(b1->records.files, (Strings{paths[0], paths[1]}));
    EXPECT_EQ(b1->file_ids, (std::vector<int32_t>{0, 1}));
    EXPECT_EQ(rows_per_file(*b1), (std::vector<std::pair<int32_t, int64_t>>{{0, 3}, {1, 1}}));
    EXPECT_EQ(b1->records.describe_row(3), paths[1] + " line 2");
    auto b2 = r.next();
    ASSERT_TRUE(b2);
    EXPECT_EQ(column(b2->records, "v"), (Strings{"5", "6", "7", "8"}));
    EXPECT_EQ(b2->file_ids, (std::vector<int32_t>{1, 3}));
    auto b3 = r.next();
    if (drop) {
      EXPECT_FALSE(b3);
    } else {
      ASSERT_TRUE(b3);
      EXPECT_EQ(column(b3->records, "v"), (Strings{"9", "10"}));
      EXPECT_FALSE(r.next());
    }
  }
}

TEST(CsvBatchReader, SkipRowsResumesInsideAFile) {
  TempDir dir;
  Strings paths = {dir.write("a.csv", "v\n1\n2\n3\n"), dir.write("b.csv", "v\n4\n5\n")};
  auto s = slices(paths);
  s[0].skip_rows = 3;
  s[1].skip_rows = 1;
  CsvBatchReader r(header_opts(), {"v"}, s, 4, false);
  auto b = r.next();
  ASSERT_TRUE(b);
  EXPECT_EQ(column(b->records, "v"), (Strings{"5"}));
  EXPECT_EQ(b->records.origins[0].line, 3);

  s[1].skip_rows = 3;
  CsvBatchReader bad(header_opts(), {"v"}, s, 4, false);
  const std::string msg = error_of([&] { bad.next(); });
  EXPECT_NE(msg.find(paths[1] + ": the resume position says 3 rows of this file were consumed but "
                                "it has only 2"),
            std::string::npos)
      << msg;
}

TEST(CsvBatchReader, EmptyAndHeaderOnlyFilesGiveNoRows) {
  TempDir dir;
  Strings paths = {testing::fixture("tests/data/csv/empty.csv"), dir.write("h.csv", "v,w\n")};
  CsvBatchReader r(header_opts(), {"v"}, slices(paths), 4, false);
  EXPECT_FALSE(r.next());
  CsvOptions o;
  o.input_fields = {"v"};
  CsvBatchReader r2(o, {"v"}, slices({paths[0]}), 4, false);
  EXPECT_FALSE(r2.next());
}

TEST(CsvBatchReader, WrongColumnCountNamesFileAndLine) {
  const std::string path = testing::fixture("tests/data/csv/bad_count.csv");
  CsvBatchReader r(header_opts(), {"a"}, slices({path}), 10, false);
  const std::string msg = error_of([&] { r.next(); });
  EXPECT_EQ(msg.rfind(path + " line 3: expected 2 columns, got 1", 0), 0u) << msg;

  CsvOptions o;
  o.input_fields = {"a", "b", "c"};
  CsvBatchReader r2(o, {"a"}, slices({path}), 10, false);
  const std::string msg2 = error_of([&] { r2.next(); });
  EXPECT_EQ(msg2.rfind(path + " line 1: expected 3 columns, got 2", 0), 0u) << msg2;
}

TEST(CsvBatchReader, HeaderMissingColumnNamesColumnAndFile) {
  const std::string path = testing::fixture("tests/data/csv/quoted_crlf.csv");
  CsvBatchReader r(header_opts(), {"id", "price"}, slices({path}), 10, false);
  const std::string msg = error_of([&] { r.next(); });
  EXPECT_NE(msg.find(path + ": column 'price' is needed"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(header: id, name, note)"), std::string::npos) << msg;
  CsvBatchReader r2(header_opts(), {"id", "price"}, slices({path}), 10, false);
  EXPECT_THROW(r2.next(), DataError);
}

TEST(CsvBatchReader, InputFieldsMissingColumnIsConfigError) {
  CsvOptions o;
  o.input_fields = {"a", "b"};
  try {
    CsvBatchReader r(o, {"a", "label"}, {}, 10, false);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("column 'label' is needed"), std::string::npos);
  }
  o.input_fields = {};
  EXPECT_THROW(CsvBatchReader(o, {"a"}, {}, 10, false), ConfigError);
  o.input_fields = {"a"};
  EXPECT_THROW(CsvBatchReader(o, {"a"}, {}, 0, false), ConfigError);
}

}  // namespace csv_reader_test
}  // namespace tzrec::data
