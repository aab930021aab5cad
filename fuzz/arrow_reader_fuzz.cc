// libFuzzer target for the Arrow IPC reader (src/arrow, what KafkaDataset decodes): any input, as
// an IPC stream or as a schema-less record batch message of every input field type, must either
// decode or raise a tzrec::Error — no crash, hang, leak or unbounded allocation.
//
// Not part of the CMake build (libFuzzer needs clang). To build and run it by hand, from the
// repository root:
//
//   clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
//       -Isrc fuzz/arrow_reader_fuzz.cc \
//       $(ls src/arrow/*.cc src/parquet/*.cc | grep -v _test.cc) src/base/logging.cc \
//       -lfmt -lsnappy -lzstd -llz4 -lbrotlidec -lbrotlienc -lz -lpthread -o build-fuzz-arrow
//   mkdir -p /tmp/arrow_fuzz_corpus
//   ./build-fuzz-arrow -max_total_time=60 -rss_limit_mb=1024 /tmp/arrow_fuzz_corpus tests/data/arrow
#include <cstddef>
#include <cstdint>
#include <string>

#include "arrow/ipc_reader.h"
#include "base/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tzrec::arrow;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  static const ArrowSchema schema = schema_from_input_fields(
      {{"i32", "INT32"}, {"i64", "INT64"}, {"f32", "FLOAT"}, {"f64", "DOUBLE"}, {"str", "STRING"},
       {"list_i32", "ARRAY_INT32"}, {"list_i64", "ARRAY_INT64"}, {"list_f32", "ARRAY_FLOAT"},
       {"list_f64", "ARRAY_DOUBLE"}, {"list_str", "ARRAY_STRING"}, {"ll_i32", "ARRAY_ARRAY_INT32"},
       {"ll_i64", "ARRAY_ARRAY_INT64"}, {"ll_f32", "ARRAY_ARRAY_FLOAT"}, {"ll_f64", "ARRAY_ARRAY_DOUBLE"},
       {"ll_str", "ARRAY_ARRAY_STRING"}, {"map_str_i32", "MAP_STRING_INT32"}, {"map_str_i64", "MAP_STRING_INT64"},
       {"map_str_f32", "MAP_STRING_FLOAT"}, {"map_str_f64", "MAP_STRING_DOUBLE"}, {"map_str_str", "MAP_STRING_STRING"},
       {"map_i64_i32", "MAP_INT64_INT32"}, {"map_i64_str", "MAP_INT64_STRING"}, {"map_i32_f64", "MAP_INT32_DOUBLE"},
       {"map_i32_i64", "MAP_INT32_INT64"}});
  try {
    read_ipc_stream(bytes, "fuzz");
  } catch (const tzrec::Error&) {
  }
  try {
    read_record_batch_message(bytes, schema, "fuzz");
  } catch (const tzrec::Error&) {
  }
  return 0;
}
