// libFuzzer target for the Parquet reader (src/parquet): any input must either decode or raise a
// tzrec::Error (DataError / IoError) — no crash, hang, leak or unbounded allocation.
//
// Not part of the CMake build (libFuzzer needs clang). The test suite runs it briefly:
// tests/e2e/parquet_fuzz_smoke_test.sh (CTest e2e.parquet_fuzz_smoke_test) builds it with
// clang++ into a temporary directory and fuzzes for 20 s (FUZZ_SECONDS) seeded with the corpus's
// *.parquet files, failing on any crash, leak, timeout or out-of-memory input; it needs clang
// and libclang-rt-14-dev (scripts/setup.sh installs them).
//
// To build and run it by hand, from the repository root:
//
//   clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
//       -Isrc fuzz/parquet_reader_fuzz.cc \
//       $(ls src/parquet/*.cc | grep -v _test.cc) src/base/logging.cc \
//       -lfmt -lsnappy -lzstd -llz4 -lbrotlidec -lbrotlienc -lz -lpthread -o build-fuzz-parquet
//   mkdir -p /tmp/parquet_fuzz_corpus
//   ./build-fuzz-parquet -max_total_time=60 -rss_limit_mb=2048 /tmp/parquet_fuzz_corpus \
//       tests/data/parquet-testing tests/data/parquet-writers
//
// (The first directory collects new inputs; the others seed the run with the test corpora. Seed
// directories are read recursively, so expected/*.json is fuzzed too; harmless, but the smoke
// test copies only the .parquet files. To replay a crash: ./build-fuzz-parquet crash-<hash>.)
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "parquet/file_reader.h"
#include "parquet/json_rows.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tzrec::parquet;
  ReaderOptions options;
  // Keep single allocations well under the fuzzer's RSS limit.
  options.limits.max_page_bytes = size_t{16} << 20;
  options.limits.max_page_values = int64_t{1} << 20;
  options.num_threads = 1;
  try {
    auto reader = FileReader::open(
        RandomAccessFile::from_buffer(std::string(reinterpret_cast<const char*>(data), size), "fuzz.parquet"),
        options);
    // Row ranges keep the output bounded: a tiny valid file may legitimately hold billions of
    // null rows.
    const int64_t n = reader->num_rows();
    const int64_t end = n < 4096 ? n : 4096;
    Table table = reader->read(std::vector<std::string>{}, 0, end);
    // Record assembly and value conversion (nested structs / maps / lists, definition levels
    // of null structs, FLOAT16, INT96, decimals of any width), as `tzrec parquet_cat` prints.
    const int64_t shown = table.num_rows < 64 ? table.num_rows : 64;
    for (int64_t r = 0; r < shown; ++r) row_to_json(table, reader->schema(), r).dump(-1, ' ', false, Json::error_handler_t::replace);
    if (end > 2) reader->read(std::vector<std::string>{}, end / 2, end);
    RowGroupStream stream(reader.get(), reader->resolve_columns({}), 0, end);
    while (stream.next()) {
    }
  } catch (const tzrec::Error&) {
    // Expected for corrupt input.
  }
  return 0;
}
