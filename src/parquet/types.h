// Parquet enums and small value types shared by the reader and the writer (no torch).
// Numeric values are those of the Parquet format's thrift definitions (parquet.thrift), because
// they are read from and written to files as is.
#pragma once

#include <cstdint>
#include <string>

namespace tzrec::parquet {

enum class PhysicalType : int8_t {
  kBoolean = 0,
  kInt32 = 1,
  kInt64 = 2,
  kInt96 = 3,
  kFloat = 4,
  kDouble = 5,
  kByteArray = 6,
  kFixedLenByteArray = 7,
};

enum class Repetition : int8_t { kRequired = 0, kOptional = 1, kRepeated = 2 };

enum class Encoding : int8_t {
  kPlain = 0,
  kPlainDictionary = 2,
  kRle = 3,
  kBitPacked = 4,
  kDeltaBinaryPacked = 5,
  kDeltaLengthByteArray = 6,
  kDeltaByteArray = 7,
  kRleDictionary = 8,
  kByteStreamSplit = 9,
};

enum class Compression : int8_t {
  kUncompressed = 0,
  kSnappy = 1,
  kGzip = 2,
  kLzo = 3,
  kBrotli = 4,
  kLz4 = 5,  // deprecated: Hadoop-framed LZ4 blocks (parquet-mr) or a bare LZ4 block; read only
  kZstd = 6,
  kLz4Raw = 7,
};

enum class PageType : int8_t { kDataPage = 0, kIndexPage = 1, kDictionaryPage = 2, kDataPageV2 = 3 };

// The deprecated ConvertedType annotation; kNone when absent.
enum class ConvertedType : int8_t {
  kNone = -1,
  kUtf8 = 0,
  kMap = 1,
  kMapKeyValue = 2,
  kList = 3,
  kEnum = 4,
  kDecimal = 5,
  kDate = 6,
  kTimeMillis = 7,
  kTimeMicros = 8,
  kTimestampMillis = 9,
  kTimestampMicros = 10,
  kUint8 = 11,
  kUint16 = 12,
  kUint32 = 13,
  kUint64 = 14,
  kInt8 = 15,
  kInt16 = 16,
  kInt32 = 17,
  kInt64 = 18,
  kJson = 19,
  kBson = 20,
  kInterval = 21,
};

enum class TimeUnit : int8_t { kMillis = 1, kMicros = 2, kNanos = 3 };

// The LogicalType union (field id of the set member); kNone when absent.
struct LogicalType {
  enum class Kind : int8_t {
    kNone = 0,
    kString = 1,
    kMap = 2,
    kList = 3,
    kEnum = 4,
    kDecimal = 5,
    kDate = 6,
    kTime = 7,
    kTimestamp = 8,
    kInteger = 10,
    kUnknown = 11,  // "always null"
    kJson = 12,
    kBson = 13,
    kUuid = 14,
    kFloat16 = 15,
    kOther = 100,  // a member this reader does not know (kept so that nothing is misread)
  };
  Kind kind = Kind::kNone;
  // kDecimal
  int32_t scale = 0;
  int32_t precision = 0;
  // kTime / kTimestamp
  bool adjusted_to_utc = false;
  TimeUnit unit = TimeUnit::kMillis;
  // kInteger
  int8_t bit_width = 0;
  bool is_signed = true;
};

const char* to_string(PhysicalType t);
const char* to_string(Repetition r);
const char* to_string(Encoding e);
const char* to_string(Compression c);
const char* to_string(PageType t);
const char* to_string(ConvertedType t);
std::string to_string(const LogicalType& t);

// Bytes per value of a fixed-width physical type (BOOLEAN: 1 in memory), 0 for BYTE_ARRAY and
// FIXED_LEN_BYTE_ARRAY (whose width comes from the schema).
int fixed_width(PhysicalType t);

// The value of an IEEE 754 half-precision number (the FLOAT16 logical type: a
// FIXED_LEN_BYTE_ARRAY(2) holding the 16 bits little-endian), exactly, including ±0, subnormals,
// ±infinity and NaN.
float float16_to_float(uint16_t bits);

}  // namespace tzrec::parquet
