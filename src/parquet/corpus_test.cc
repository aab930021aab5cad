// Every file of the Parquet test corpora decodes to exactly the rows of its expected/<file>.json,
// which an independent reader produced:
//   tests/data/parquet-testing — the public apache/parquet-testing corpus (written by parquet-mr,
//     parquet-cpp/pyarrow, Impala, Spark, parquet-rs, ...; see that folder's README);
//   tests/data/parquet-writers — files written for these tests with other implementations' npm
//     packages (@dsnp/parquetjs, DuckDB; see that folder's README and tools/).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "parquet/file_reader.h"
#include "parquet/json_rows.h"

namespace tzrec::parquet {
namespace corpus_test {

using json = nlohmann::ordered_json;

std::string data_dir() { return std::string(TZREC_SOURCE_DIR) + "/tests/data"; }
std::string corpus_dir() { return data_dir() + "/parquet-testing"; }
const char* const kCorpora[] = {"parquet-testing", "parquet-writers"};

// "corpus/file.parquet" → "corpus/expected/file.parquet.json".
std::string expected_path(const std::string& rel) {
  const size_t slash = rel.find('/');
  return data_dir() + "/" + rel.substr(0, slash) + "/expected/" + rel.substr(slash + 1) + ".json";
}

// Numbers: integers exactly, floating point with relative tolerance 1e-6 (FLOAT is widened to
// double in the expected files).
bool same(const json& got, const json& want, std::string* where, const std::string& path) {
  if (got.is_number() && want.is_number()) {
    if (got.is_number_float() || want.is_number_float()) {
      double g = got.get<double>(), w = want.get<double>();
      if (std::fabs(g - w) <= 1e-6 * std::max(1.0, std::fabs(w))) return true;
    } else if (got == want) {
      return true;
    }
    *where = path + ": got " + got.dump() + ", want " + want.dump();
    return false;
  }
  if (got.type() != want.type()) {
    *where = path + ": got " + got.dump(-1, ' ', false, json::error_handler_t::replace) + ", want " + want.dump();
    return false;
  }
  if (got.is_array()) {
    if (got.size() != want.size()) {
      *where = path + ": got " + got.dump() + ", want " + want.dump();
      return false;
    }
    for (size_t i = 0; i < got.size(); ++i) {
      if (!same(got[i], want[i], where, path + "[" + std::to_string(i) + "]")) return false;
    }
    return true;
  }
  if (got.is_object()) {
    if (got.size() != want.size()) {
      *where = path + ": got keys " + got.dump() + ", want " + want.dump();
      return false;
    }
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!got.contains(it.key())) {
        *where = path + ": missing key " + it.key();
        return false;
      }
      if (!same(got[it.key()], it.value(), where, path + "." + it.key())) return false;
    }
    return true;
  }
  if (got != want) {
    *where = path + ": got " + got.dump(-1, ' ', false, json::error_handler_t::replace) + ", want " + want.dump();
    return false;
  }
  return true;
}

// Never throws: a missing folder yields no files (reported by CorpusIsPresent below) instead of an
// exception during test registration, which would abort the whole binary.
std::vector<std::string> corpus_files() {
  std::vector<std::string> files;
  for (const char* corpus : kCorpora) {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(data_dir() + "/" + corpus, ec), end; !ec && it != end;
         it.increment(ec)) {
      if (it->path().extension() == ".parquet") files.push_back(std::string(corpus) + "/" + it->path().filename().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(CorpusFiles, CorpusIsPresent) {
  EXPECT_GE(corpus_files().size(), 10u) << "the Parquet test corpus is missing from " << corpus_dir();
}

class CorpusTest : public ::testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CorpusTest);

void check_file(const std::string& name, int num_threads) {
  std::ifstream in(expected_path(name));
  ASSERT_TRUE(in) << "missing " << expected_path(name);
  json expected = json::parse(in);
  ReaderOptions options;
  options.num_threads = num_threads;
  auto reader = FileReader::open(data_dir() + "/" + name, options);
  Table table = reader->read();
  ASSERT_EQ(table.num_rows, static_cast<int64_t>(expected.size()));
  JsonOptions jo;
  jo.int64_as_string = true;
  for (int64_t r = 0; r < table.num_rows; ++r) {
    json got = row_to_json(table, reader->schema(), r, jo);
    std::string where;
    ASSERT_TRUE(same(got, expected[static_cast<size_t>(r)], &where, "row " + std::to_string(r))) << name << " " << where;
  }
}

TEST_P(CorpusTest, DecodesToExpectedRows) { check_file(GetParam(), 1); }

TEST_P(CorpusTest, DecodesToExpectedRowsOnThreeThreads) { check_file(GetParam(), 3); }

// Every row range [b, e) equals the same rows of a full read (row groups and pages skipped).
TEST_P(CorpusTest, RowRangesMatchFullRead) {
  auto reader = FileReader::open(data_dir() + "/" + GetParam());
  Table full = reader->read();
  const int64_t n = full.num_rows;
  JsonOptions jo;
  std::vector<std::pair<int64_t, int64_t>> ranges = {{0, n}, {n / 3, n / 2}, {n / 2, n}, {n - 1 < 0 ? 0 : n - 1, n},
                                                     {1 < n ? 1 : n, n}};
  for (auto [b, e] : ranges) {
    if (b > e) continue;
    Table part = reader->read(std::vector<std::string>{}, b, e);
    ASSERT_EQ(part.num_rows, e - b);
    for (int64_t r = b; r < e; ++r) {
      ASSERT_EQ(row_to_json(part, reader->schema(), r - b, jo), row_to_json(full, reader->schema(), r, jo))
          << GetParam() << " range [" << b << ", " << e << ") row " << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ParquetTesting, CorpusTest, ::testing::ValuesIn(corpus_files()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string s = info.param;
                           for (auto& ch : s) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return s;
                         });

}  // namespace corpus_test
}  // namespace tzrec::parquet
