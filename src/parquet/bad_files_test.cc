// Corrupt, truncated and unsupported files give a DataError (or IoError) that names the file and,
// where it applies, the row group, column and page — never a crash, a hang or a huge allocation.
#include <random>

#include <gtest/gtest.h>

#include "parquet/codecs.h"
#include "parquet/crc32.h"
#include "parquet/file_reader.h"
#include "parquet/metadata.h"
#include "parquet/testing_util.h"
#include "parquet/writer.h"

namespace tzrec::parquet {
namespace bad_files_test {

using testing::TempDir;

// A file of one REQUIRED INT64 column "x" built from raw pages (header sizes filled in from the
// bodies unless set), for crafting corruptions the writer would never produce.
using RawPage = testing::CraftedPage;

std::string int64_bytes(std::vector<int64_t> v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 8);
}

RawPage plain_page(std::vector<int64_t> values) {
  RawPage p;
  p.header.type = PageType::kDataPage;
  DataPageHeader d;
  d.num_values = static_cast<int32_t>(values.size());
  p.header.data_page_header = d;
  p.body = int64_bytes(values);
  return p;
}

std::string make_file(const std::vector<RawPage>& pages, int64_t rows, Compression codec = Compression::kUncompressed,
                      const std::function<void(FileMetaData&)>& tweak = {}) {
  testing::CraftedColumn col;
  col.type = PhysicalType::kInt64;
  col.path = {"x"};
  col.codec = codec;
  col.num_values = rows;
  col.pages = pages;
  return testing::craft_file({testing::schema_group("schema", 1, std::nullopt),
                              testing::schema_leaf("x", PhysicalType::kInt64, Repetition::kRequired)},
                             {col}, rows, tweak);
}

std::unique_ptr<FileReader> open_bytes(const std::string& bytes, const std::string& name = "bad.parquet") {
  return FileReader::open(RandomAccessFile::from_buffer(bytes, name));
}

// Reads everything and returns the DataError message ("" when no error).
std::string read_error(const std::string& bytes) {
  try {
    open_bytes(bytes)->read();
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

void expect_mentions(const std::string& msg, std::initializer_list<const char*> parts) {
  EXPECT_FALSE(msg.empty()) << "expected an error";
  for (const char* p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
}

TEST(BadFiles, CraftedFileReadsWhenIntact) {
  std::string f = make_file({plain_page({1, 2}), plain_page({3})}, 3);
  Table t = open_bytes(f)->read();
  ASSERT_EQ(t.num_rows, 3);
  EXPECT_EQ(t.columns[0].data<int64_t>()[2], 3);
}

TEST(BadFiles, TruncatedFile) {
  std::string f = make_file({plain_page({1, 2, 3})}, 3);
  for (size_t keep : {size_t{0}, size_t{3}, size_t{11}, f.size() / 2, f.size() - 1}) {
    std::string msg = read_error(f.substr(0, keep));
    expect_mentions(msg, {"bad.parquet"});
  }
  expect_mentions(read_error(f.substr(0, 5)), {"too short"});
  expect_mentions(read_error(f.substr(0, f.size() - 1)), {"magic"});
}

TEST(BadFiles, TruncatedFooter) {
  // The footer length claims more bytes than the file has.
  std::string f = make_file({plain_page({1})}, 1);
  uint32_t huge = static_cast<uint32_t>(f.size());
  std::memcpy(&f[f.size() - 8], &huge, 4);
  expect_mentions(read_error(f), {"bad.parquet", "footer length"});
  // The footer length cuts the metadata short.
  std::string g = make_file({plain_page({1})}, 1);
  uint32_t len;
  std::memcpy(&len, &g[g.size() - 8], 4);
  std::string cut = g.substr(0, g.size() - 8 - 5);  // the footer's last 5 bytes are missing
  uint32_t short_len = len - 5;
  cut.append(reinterpret_cast<const char*>(&short_len), 4);
  cut += "PAR1";
  expect_mentions(read_error(cut), {"bad.parquet", "corrupt footer metadata"});
}

TEST(BadFiles, WrongMagic) {
  std::string f = make_file({plain_page({1})}, 1);
  std::string head = f;
  head[3] = '2';
  expect_mentions(read_error(head), {"bad.parquet", "not a Parquet file"});
  std::string tail = f;
  tail[tail.size() - 1] = 'X';
  expect_mentions(read_error(tail), {"not a Parquet file"});
  std::string encrypted = f;
  encrypted[encrypted.size() - 1] = 'E';
  expect_mentions(read_error(encrypted), {"encrypted"});
}

TEST(BadFiles, CorruptThriftFooter) {
  std::string f = make_file({plain_page({1})}, 1);
  uint32_t len;
  std::memcpy(&len, &f[f.size() - 8], 4);
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::string g = f;
    for (size_t i = g.size() - 8 - len; i < g.size() - 8; ++i) g[i] = static_cast<char>(rng());
    try {
      open_bytes(g)->read();
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find("bad.parquet"), std::string::npos) << e.what();
    }
  }
  // Structs nested 100000 deep: rejected by the depth limit, not by a stack overflow.
  std::string deep = "PAR1" + std::string(100000, '\xfc');  // unknown field 15, a struct, ...
  uint32_t deep_len = 100000;
  deep.append(reinterpret_cast<const char*>(&deep_len), 4);
  deep += "PAR1";
  expect_mentions(read_error(deep), {"corrupt footer metadata", "nesting deeper"});
  // A list claiming 2^40 elements in a few bytes: rejected before allocating.
  std::string big = "PAR1";
  std::string body = "\x29\xfc\xff\xff\xff\xff\xff\x3f";  // field 2 (schema): list<struct> of 2^46 - 1
  big += body;
  uint32_t blen = static_cast<uint32_t>(body.size());
  big.append(reinterpret_cast<const char*>(&blen), 4);
  big += "PAR1";
  expect_mentions(read_error(big), {"corrupt footer metadata"});
}

TEST(BadFiles, PageSizeBeyondFileEnd) {
  RawPage p = plain_page({1, 2});
  p.keep_sizes = true;
  p.header.uncompressed_page_size = 1 << 20;
  p.header.compressed_page_size = 1 << 20;
  std::string msg = read_error(make_file({p}, 2));
  expect_mentions(msg, {"bad.parquet", "row group 0", "column 'x'", "page 0", "extends beyond the column chunk"});
  // The column chunk itself claims bytes past the end of the file.
  std::string g = make_file({plain_page({1, 2})}, 2, Compression::kUncompressed, [](FileMetaData& md) {
    md.row_groups[0].columns[0].meta_data.total_compressed_size = 1 << 30;
  });
  expect_mentions(read_error(g), {"row group 0", "column 'x'", "outside the file's data section"});
}

TEST(BadFiles, UnsupportedCodec) {
  std::string msg = read_error(make_file({plain_page({1})}, 1, Compression::kLzo));
  expect_mentions(msg, {"bad.parquet", "column 'x'", "unsupported codec", "LZO"});
}

// The deprecated LZ4 codec is read (Hadoop framing, else a raw block); bytes that are neither
// give one error naming the file, column and page.
TEST(BadFiles, Lz4NeitherHadoopNorRawBlock) {
  RawPage p = plain_page({1, 2, 3});
  p.keep_sizes = true;
  p.header.uncompressed_page_size = static_cast<int32_t>(p.body.size());
  p.body = std::string("\x00\x00\x00\x0c\x00\x00\x00\x40garbage!", 16);
  p.header.compressed_page_size = static_cast<int32_t>(p.body.size());
  std::string msg = read_error(make_file({p}, 3, Compression::kLz4));
  expect_mentions(msg, {"bad.parquet", "row group 0", "column 'x'", "page 0", "LZ4"});
}

TEST(BadFiles, ChecksumMismatch) {
  RawPage p = plain_page({1, 2, 3});
  p.header.crc = crc32(reinterpret_cast<const uint8_t*>(p.body.data()), p.body.size());
  EXPECT_EQ(read_error(make_file({p}, 3)), "");
  p.header.crc = *p.header.crc ^ 1;
  expect_mentions(read_error(make_file({p}, 3)), {"page 0", "checksum mismatch"});
}

TEST(BadFiles, CorruptPages) {
  // Fewer value bytes than the header's value count.
  RawPage short_page = plain_page({1, 2});
  short_page.header.data_page_header->num_values = 3;
  expect_mentions(read_error(make_file({short_page}, 3)), {"page 0", "PLAIN"});
  // More rows in the pages than the row group says.
  expect_mentions(read_error(make_file({plain_page({1, 2, 3})}, 2)), {"more than the row group"});
  // Fewer rows in the pages than the row group says.
  expect_mentions(read_error(make_file({plain_page({1})}, 2)), {"ends after 1 rows"});
  // Dictionary index out of range.
  RawPage dict;
  dict.header.type = PageType::kDictionaryPage;
  DictionaryPageHeader dh;
  dh.num_values = 2;
  dict.header.dictionary_page_header = dh;
  dict.body = int64_bytes({10, 20});
  RawPage data;
  data.header.type = PageType::kDataPage;
  DataPageHeader d;
  d.num_values = 2;
  d.encoding = Encoding::kRleDictionary;
  data.header.data_page_header = d;
  data.body = std::string("\x03\x04\x05", 3);  // bit width 3, RLE run of 2 x value 5
  expect_mentions(read_error(make_file({dict, data}, 2)), {"page 1", "dictionary index 5 out of range"});
  data.body = std::string("\x03\x04\x01", 3);
  EXPECT_EQ(read_error(make_file({dict, data}, 2)), "");
  // Dictionary-encoded page without a dictionary.
  expect_mentions(read_error(make_file({data}, 2)), {"no dictionary page"});
  // Garbage page header.
  RawPage garbage = plain_page({1});
  std::string f = make_file({garbage}, 1);
  f[4] = '\x0f';  // invalid wire type in the first field header
  expect_mentions(read_error(f), {"page 0", "corrupt page header"});
  // Absurd value counts are refused before allocating.
  RawPage huge = plain_page({1});
  huge.header.data_page_header->num_values = 2000000000;
  expect_mentions(read_error(make_file({huge}, 1)), {"limit"});
}

TEST(BadFiles, MissingFileIsAnIoError) {
  EXPECT_THROW(FileReader::open("/nonexistent/dir/x.parquet"), IoError);
}

// Random byte mutations of a real file (dictionary, SNAPPY, lists, nulls): every read either
// succeeds or throws tzrec::Error. Run under -fsanitize=address,undefined to check memory safety.
TEST(BadFiles, RandomMutationsNeverCrash) {
  TempDir dir;
  std::string path = dir.file("m.parquet");
  {
    std::vector<WriterField> f(3);
    f[0] = {"a", PhysicalType::kInt64};
    f[1] = {"s", PhysicalType::kByteArray};
    f[2] = {"l", PhysicalType::kInt32, true, 1, true};
    WriterOptions o;
    o.row_group_rows = 40;
    o.page_bytes = 100;
    FileWriter w(path, f, o);
    std::vector<ColumnBuilder> b;
    for (int c = 0; c < 3; ++c) b.emplace_back(w.schema().column(c));
    for (int i = 0; i < 100; ++i) {
      if (i % 7 == 0) b[0].append_null(); else b[0].append<int64_t>(i * 3);
      b[1].append_string("v" + std::to_string(i % 9));
      b[2].begin_list();
      for (int k = 0; k < i % 3; ++k) b[2].append<int32_t>(k);
      b[2].end_list();
    }
    Table t;
    t.num_rows = 100;
    for (auto& x : b) t.columns.push_back(x.finish());
    w.write(t);
    w.close();
  }
  const std::string original = testing::read_file(path);
  std::mt19937 rng(12345);
  ReaderOptions options;
  options.limits.max_page_bytes = 1 << 20;
  options.limits.max_page_values = 1 << 16;
  int errors = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string g = original;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % g.size();
      switch (rng() % 3) {
        case 0: g[pos] = static_cast<char>(rng()); break;
        case 1: g[pos] = static_cast<char>(g[pos] ^ (1 << (rng() % 8))); break;
        default: g[pos] = static_cast<char>(g[pos] + 1); break;
      }
    }
    try {
      auto reader = FileReader::open(RandomAccessFile::from_buffer(g, "m.parquet"), options);
      reader->read();
      if (reader->num_rows() > 10) reader->read(std::vector<std::string>{}, 5, 10);
    } catch (const tzrec::Error&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 100);  // the mutations do hit the decoders
}

}  // namespace bad_files_test
}  // namespace tzrec::parquet
