#include "data/csv_record_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "data/testing_util.h"

namespace tzrec::data {
namespace csv_record_stream_test {

using testing::TempDir;

struct Rec {
  int64_t line;
  std::vector<std::string> fields;
};

std::vector<Rec> read_all(const std::string& path, char delim) {
  CsvRecordStream s(path, delim);
  std::vector<Rec> out;
  std::vector<std::string_view> f;
  while (s.next(&f)) out.push_back(Rec{s.record_line(), {f.begin(), f.end()}});
  return out;
}

std::vector<Rec> parse(const std::string& bytes, char delim = ',') {
  TempDir dir;
  return read_all(dir.write("x.csv", bytes), delim);
}

using Fields = std::vector<std::string>;

TEST(CsvRecordStream, QuotedFixtureWithCrlfAndNoTrailingNewline) {
  auto recs = read_all(testing::fixture("tests/data/csv/quoted_crlf.csv"), ',');
  ASSERT_EQ(recs.size(), 5u);
  EXPECT_EQ(recs[0].fields, (Fields{"id", "name", "note"}));
  EXPECT_EQ(recs[1].fields, (Fields{"1", "Smith, John", "said \"hi\""}));
  // The CRLF inside the quoted field is data, kept verbatim.
  EXPECT_EQ(recs[2].fields, (Fields{"2", "plain", "two\r\nlines"}));
  EXPECT_EQ(recs[3].fields, (Fields{"3", "", "x"}));
  EXPECT_EQ(recs[4].fields, (Fields{"4", "", "last"}));
  // Physical lines: the embedded newline shifts the following records.
  EXPECT_EQ(recs[0].line, 1);
  EXPECT_EQ(recs[1].line, 2);
  EXPECT_EQ(recs[2].line, 3);
  EXPECT_EQ(recs[3].line, 5);
  EXPECT_EQ(recs[4].line, 6);
}

TEST(CsvRecordStream, TabDelimiterSkipsEmptyLines) {
  auto recs = read_all(testing::fixture("tests/data/csv/no_header.tsv"), '\t');
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].fields, (Fields{"10", "a", "0.5"}));
  EXPECT_EQ(recs[1].fields, (Fields{"11", "b", "1.5"}));
  EXPECT_EQ(recs[1].line, 3);
  EXPECT_EQ(recs[2].fields, (Fields{"12", "", "2.5"}));
}

TEST(CsvRecordStream, ControlByteDelimiter) {
  auto recs = parse(
      "a\x01"
      "b\x01\n\x01x\x01\"q\x01\"\n",
      '\x01');
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].fields, (Fields{"a", "b", ""}));
  EXPECT_EQ(recs[1].fields, (Fields{"", "x", "q\x01"}));
}

TEST(CsvRecordStream, EmptyFileAndBlankLinesOnly) {
  EXPECT_TRUE(parse("").empty());
  EXPECT_TRUE(parse("\n\r\n\n").empty());
}

TEST(CsvRecordStream, TrailingDelimiterMakesEmptyLastField) {
  auto recs = parse("a,b,\n,\n");
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].fields, (Fields{"a", "b", ""}));
  EXPECT_EQ(recs[1].fields, (Fields{"", ""}));
}

TEST(CsvRecordStream, QuoteRules) {
  auto recs = parse(
      "\"\"\"\",\"a\"\"\"\n"  // field that is a single quote; a"
      "ab\"c,\"x\"y\n"        // quote inside an unquoted field is literal; text after quote kept
      "\"multi\nline\nfield\",z\n"  // two embedded newlines
      "\"\"\n");                    // quoted empty field
  ASSERT_EQ(recs.size(), 4u);
  EXPECT_EQ(recs[0].fields, (Fields{"\"", "a\""}));
  EXPECT_EQ(recs[1].fields, (Fields{"ab\"c", "xy"}));
  EXPECT_EQ(recs[2].fields, (Fields{"multi\nline\nfield", "z"}));
  EXPECT_EQ(recs[2].line, 3);
  EXPECT_EQ(recs[3].fields, (Fields{""}));
  EXPECT_EQ(recs[3].line, 6);
}

TEST(CsvRecordStream, ByteOrderMarkSkipped) {
  auto recs = parse("\xEF\xBB\xBFid,v\n1,2\n");
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].fields, (Fields{"id", "v"}));
}

TEST(CsvRecordStream, RecordsLargerThanTheBufferAndAcrossRefills) {
  // 3 MiB quoted field forces buffer growth; many small records force refills mid-record.
  std::string big(3 << 20, 'x');
  big[12345] = ',';
  big[777777] = '\n';
  std::string bytes = "\"" + big + "\",tail\n";
  for (int i = 0; i < 200000; ++i)
    bytes += "r" + std::to_string(i) + ",\"q\"\"" + std::to_string(i) + "\"\r\n";
  auto recs = parse(bytes);
  ASSERT_EQ(recs.size(), 200001u);
  EXPECT_EQ(recs[0].fields, (Fields{big, "tail"}));
  EXPECT_EQ(recs[1].line, 3);
  for (int i = 0; i < 200000; i += 9973) {
    EXPECT_EQ(recs[i + 1].fields, (Fields{"r" + std::to_string(i), "q\"" + std::to_string(i)}));
    EXPECT_EQ(recs[i + 1].line, 3 + i);
  }
}

TEST(CsvRecordStream, SkipCountsRecordsNotLines) {
  TempDir dir;
  CsvRecordStream s(dir.write("x.csv", "a\n\"b\nc\"\n\nd\n"), ',');
  ASSERT_TRUE(s.skip());
  ASSERT_TRUE(s.skip());
  std::vector<std::string_view> f;
  ASSERT_TRUE(s.next(&f));
  EXPECT_EQ(f[0], "d");
  EXPECT_EQ(s.record_line(), 5);
  EXPECT_FALSE(s.next(&f));
}

TEST(CsvRecordStream, UnterminatedQuoteIsDataError) {
  TempDir dir;
  const std::string path = dir.write("bad.csv", "a,b\n1,\"oops\n2,3\n");
  CsvRecordStream s(path, ',');
  std::vector<std::string_view> f;
  ASSERT_TRUE(s.next(&f));
  try {
    s.next(&f);
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + " line 2: quoted field is not closed", 0), 0u)
        << e.what();
  }
}

TEST(CsvRecordStream, MissingFileIsDataError) {
  try {
    CsvRecordStream s("/nonexistent/dir/file.csv", ',');
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open input file /nonexistent/dir/file.csv"),
              std::string::npos);
  }
}

TEST(CsvRecordStream, QuoteDelimiterRejected) {
  TempDir dir;
  EXPECT_THROW(CsvRecordStream(dir.write("x.csv", "a"), '"'), ConfigError);
}

}  // namespace csv_record_stream_test
}  // namespace tzrec::data
