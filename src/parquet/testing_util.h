// Helpers shared by the parquet tests (header-only, test binaries only).
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "parquet/column_data.h"
#include "parquet/io.h"
#include "parquet/metadata.h"

namespace tzrec::parquet::testing {

// A fresh directory under the build tree, removed with the object.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = std::filesystem::path(TZREC_BINARY_DIR) / "parquet_test_tmp" /
            (std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Exact equality of two columns' data (values of null slots included, which are zero).
inline void expect_same_column(const ColumnData& a, const ColumnData& b, const std::string& what) {
  EXPECT_EQ(a.num_rows, b.num_rows) << what;
  ASSERT_EQ(a.lists.size(), b.lists.size()) << what;
  for (size_t k = 0; k < a.lists.size(); ++k) {
    EXPECT_EQ(a.lists[k].offsets, b.lists[k].offsets) << what << " list level " << k;
    EXPECT_EQ(a.lists[k].validity, b.lists[k].validity) << what << " list level " << k;
  }
  EXPECT_EQ(a.validity, b.validity) << what;
  EXPECT_EQ(a.offsets, b.offsets) << what;
  ASSERT_EQ(a.values.size(), b.values.size()) << what;
  if (a.values.size() > 0) EXPECT_EQ(0, std::memcmp(a.values.data(), b.values.data(), a.values.size())) << what;
}

// A RandomAccessFile that counts the bytes read (to check that reads skip data).
class CountingFile : public RandomAccessFile {
 public:
  explicit CountingFile(std::shared_ptr<RandomAccessFile> inner) : inner_(std::move(inner)) {}
  const std::string& name() const override { return inner_->name(); }
  int64_t size() const override { return inner_->size(); }
  void read_at(int64_t offset, size_t n, uint8_t* out) const override {
    bytes_read_ += static_cast<int64_t>(n);
    inner_->read_at(offset, n, out);
  }
  int64_t bytes_read() const { return bytes_read_; }
  void reset() { bytes_read_ = 0; }

 private:
  std::shared_ptr<RandomAccessFile> inner_;
  mutable std::atomic<int64_t> bytes_read_{0};
};

// Files assembled from hand-made pages, for shapes and corruptions our writer never produces.
struct CraftedPage {
  PageHeader header;
  std::string body;
  bool keep_sizes = false;  // else both page sizes are set to body.size()
};

struct CraftedColumn {
  PhysicalType type = PhysicalType::kInt64;
  std::vector<std::string> path;
  Compression codec = Compression::kUncompressed;
  int64_t num_values = 0;
  std::vector<CraftedPage> pages;
};

// One row group of `rows` rows holding the columns (in schema leaf order).
inline std::string craft_file(std::vector<SchemaElement> schema, const std::vector<CraftedColumn>& columns,
                              int64_t rows, const std::function<void(FileMetaData&)>& tweak = {}) {
  std::string out = "PAR1";
  RowGroup rg;
  rg.num_rows = rows;
  for (const CraftedColumn& col : columns) {
    ColumnMetaData m;
    m.type = col.type;
    m.encodings = {Encoding::kPlain};
    m.path_in_schema = col.path;
    m.codec = col.codec;
    m.num_values = col.num_values;
    const int64_t start = static_cast<int64_t>(out.size());
    bool first_data = true;
    for (const CraftedPage& p : col.pages) {
      PageHeader h = p.header;
      if (!p.keep_sizes) {
        h.uncompressed_page_size = static_cast<int32_t>(p.body.size());
        h.compressed_page_size = static_cast<int32_t>(p.body.size());
      }
      if (h.type == PageType::kDictionaryPage) {
        m.dictionary_page_offset = static_cast<int64_t>(out.size());
      } else if (first_data) {
        m.data_page_offset = static_cast<int64_t>(out.size());
        first_data = false;
      }
      encode_page_header(h, &out);
      out += p.body;
    }
    m.total_compressed_size = static_cast<int64_t>(out.size()) - start;
    m.total_uncompressed_size = m.total_compressed_size;
    ColumnChunk cc;
    cc.meta_data = m;
    cc.has_meta_data = true;
    rg.columns.push_back(cc);
  }
  FileMetaData md;
  md.schema = std::move(schema);
  md.num_rows = rows;
  md.row_groups = {rg};
  if (tweak) tweak(md);
  std::string footer;
  encode_file_metadata(md, &footer);
  out += footer;
  uint32_t len = static_cast<uint32_t>(footer.size());
  out.append(reinterpret_cast<const char*>(&len), 4);
  out += "PAR1";
  return out;
}

inline SchemaElement schema_group(const std::string& name, int children, std::optional<Repetition> rep,
                                  ConvertedType ct = ConvertedType::kNone) {
  SchemaElement e;
  e.name = name;
  e.num_children = children;
  e.repetition = rep;
  e.converted_type = ct;
  return e;
}

inline SchemaElement schema_leaf(const std::string& name, PhysicalType type, Repetition rep,
                                 ConvertedType ct = ConvertedType::kNone) {
  SchemaElement e;
  e.name = name;
  e.type = type;
  e.repetition = rep;
  e.converted_type = ct;
  return e;
}

}  // namespace tzrec::parquet::testing
