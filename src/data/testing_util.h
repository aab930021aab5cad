// Test-only helpers shared by the unit tests of data/ and the layers above (header-only, no torch).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "data/parallel_loader.h"
#include "data/read_position.h"
#include "data/record_batch.h"
#include "parquet/testing_util.h"
#include "parquet/writer.h"

namespace tzrec::data::testing {

// Whole-file bytes in and out (parquet/testing_util.h).
using parquet::testing::read_file;
using parquet::testing::write_file;

// The message of the E that f() throws, or "(no error)".
template <typename E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

// Writes a Parquet file at `path` with `rows` rows of one required int64 column "id" =
// first_id + i (a global row number), with `options` (row group and page sizes); returns path.
inline std::string write_id_parquet(const std::string& path, int64_t first_id, int64_t rows,
                                    const parquet::WriterOptions& options = {}) {
  parquet::FileWriter w(path, {parquet::WriterField{"id", parquet::PhysicalType::kInt64, false}}, options);
  parquet::ColumnBuilder id(w.schema().column(0));
  for (int64_t i = 0; i < rows; ++i) id.append(first_id + i);
  parquet::Table t;
  t.num_rows = rows;
  t.columns.push_back(id.finish());
  w.write(std::move(t));
  w.close();
  return path;
}

// Writes a Parquet file at `path` of a required string column "id" and a list<float> column
// "emb" (one row per entry of `rows`); returns path.
inline std::string write_id_embedding_parquet(const std::string& path,
                                              const std::vector<std::pair<std::string, std::vector<float>>>& rows) {
  parquet::FileWriter w(path, {parquet::WriterField{"id", parquet::PhysicalType::kByteArray, false},
                               parquet::WriterField{"emb", parquet::PhysicalType::kFloat, false, 1, false}});
  parquet::ColumnBuilder id(w.schema().column(0)), emb(w.schema().column(1));
  for (const auto& [i, v] : rows) {
    id.append_string(i);
    emb.begin_list();
    for (float x : v) emb.append(x);
    emb.end_list();
  }
  parquet::Table t;
  t.num_rows = static_cast<int64_t>(rows.size());
  t.columns.push_back(id.finish());
  t.columns.push_back(emb.finish());
  w.write(std::move(t));
  w.close();
  return path;
}

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/tzrec_test_XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path()/name (nothing is created).
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  // Writes `bytes` verbatim to path()/name and returns the full path.
  std::string write(const std::string& name, const std::string& bytes) const {
    const std::string full = path_ + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(full).parent_path());
    std::ofstream out(full, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + full);
    return full;
  }

 private:
  std::string path_;
};

// The int64 column "id" of a batch, one value per row: the first typed column (Parquet) or the
// first text column (CSV) parsed.
inline std::vector<int64_t> ids_of(const RecordBatch& b) {
  if (!b.typed_columns.empty()) {
    const auto& v = b.typed_columns.at(0).values;
    return std::vector<int64_t>(v.data<int64_t>(), v.data<int64_t>() + b.num_rows());
  }
  std::vector<int64_t> ids;
  for (int64_t r = 0; r < b.num_rows(); ++r) ids.push_back(std::stoll(std::string(b.columns.at(0).cell(r))));
  return ids;
}

// Up to `limit` items of `loader`; *last (when given) gets the position after the last one taken.
template <typename T>
std::vector<T> take(ParallelLoader<T>& loader, size_t limit, std::optional<ReadPosition>* last = nullptr) {
  std::vector<T> out;
  while (out.size() < limit) {
    auto item = loader.next();
    if (!item) break;
    out.push_back(std::move(item->value));
    if (last != nullptr) *last = item->position;
  }
  return out;
}

// Repository fixture path, e.g. fixture("tests/data/csv/quoted_crlf.csv").
inline std::string fixture(const std::string& relative) {
  return std::string(TZREC_SOURCE_DIR) + "/" + relative;
}

}  // namespace tzrec::data::testing
