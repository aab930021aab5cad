#include "parquet/types.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace tzrec::parquet {

const char* to_string(PhysicalType t) {
  switch (t) {
    case PhysicalType::kBoolean: return "BOOLEAN";
    case PhysicalType::kInt32: return "INT32";
    case PhysicalType::kInt64: return "INT64";
    case PhysicalType::kInt96: return "INT96";
    case PhysicalType::kFloat: return "FLOAT";
    case PhysicalType::kDouble: return "DOUBLE";
    case PhysicalType::kByteArray: return "BYTE_ARRAY";
    case PhysicalType::kFixedLenByteArray: return "FIXED_LEN_BYTE_ARRAY";
  }
  return "UNKNOWN_TYPE";
}

const char* to_string(Repetition r) {
  switch (r) {
    case Repetition::kRequired: return "REQUIRED";
    case Repetition::kOptional: return "OPTIONAL";
    case Repetition::kRepeated: return "REPEATED";
  }
  return "UNKNOWN_REPETITION";
}

const char* to_string(Encoding e) {
  switch (e) {
    case Encoding::kPlain: return "PLAIN";
    case Encoding::kPlainDictionary: return "PLAIN_DICTIONARY";
    case Encoding::kRle: return "RLE";
    case Encoding::kBitPacked: return "BIT_PACKED";
    case Encoding::kDeltaBinaryPacked: return "DELTA_BINARY_PACKED";
    case Encoding::kDeltaLengthByteArray: return "DELTA_LENGTH_BYTE_ARRAY";
    case Encoding::kDeltaByteArray: return "DELTA_BYTE_ARRAY";
    case Encoding::kRleDictionary: return "RLE_DICTIONARY";
    case Encoding::kByteStreamSplit: return "BYTE_STREAM_SPLIT";
  }
  return "UNKNOWN_ENCODING";
}

const char* to_string(Compression c) {
  switch (c) {
    case Compression::kUncompressed: return "UNCOMPRESSED";
    case Compression::kSnappy: return "SNAPPY";
    case Compression::kGzip: return "GZIP";
    case Compression::kLzo: return "LZO";
    case Compression::kBrotli: return "BROTLI";
    case Compression::kLz4: return "LZ4";
    case Compression::kZstd: return "ZSTD";
    case Compression::kLz4Raw: return "LZ4_RAW";
  }
  return "UNKNOWN_CODEC";
}

const char* to_string(PageType t) {
  switch (t) {
    case PageType::kDataPage: return "DATA_PAGE";
    case PageType::kIndexPage: return "INDEX_PAGE";
    case PageType::kDictionaryPage: return "DICTIONARY_PAGE";
    case PageType::kDataPageV2: return "DATA_PAGE_V2";
  }
  return "UNKNOWN_PAGE_TYPE";
}

const char* to_string(ConvertedType t) {
  switch (t) {
    case ConvertedType::kNone: return "NONE";
    case ConvertedType::kUtf8: return "UTF8";
    case ConvertedType::kMap: return "MAP";
    case ConvertedType::kMapKeyValue: return "MAP_KEY_VALUE";
    case ConvertedType::kList: return "LIST";
    case ConvertedType::kEnum: return "ENUM";
    case ConvertedType::kDecimal: return "DECIMAL";
    case ConvertedType::kDate: return "DATE";
    case ConvertedType::kTimeMillis: return "TIME_MILLIS";
    case ConvertedType::kTimeMicros: return "TIME_MICROS";
    case ConvertedType::kTimestampMillis: return "TIMESTAMP_MILLIS";
    case ConvertedType::kTimestampMicros: return "TIMESTAMP_MICROS";
    case ConvertedType::kUint8: return "UINT_8";
    case ConvertedType::kUint16: return "UINT_16";
    case ConvertedType::kUint32: return "UINT_32";
    case ConvertedType::kUint64: return "UINT_64";
    case ConvertedType::kInt8: return "INT_8";
    case ConvertedType::kInt16: return "INT_16";
    case ConvertedType::kInt32: return "INT_32";
    case ConvertedType::kInt64: return "INT_64";
    case ConvertedType::kJson: return "JSON";
    case ConvertedType::kBson: return "BSON";
    case ConvertedType::kInterval: return "INTERVAL";
  }
  return "UNKNOWN_CONVERTED_TYPE";
}

namespace {
const char* unit_name(TimeUnit u) {
  switch (u) {
    case TimeUnit::kMillis: return "MILLIS";
    case TimeUnit::kMicros: return "MICROS";
    case TimeUnit::kNanos: return "NANOS";
  }
  return "?";
}
}  // namespace

std::string to_string(const LogicalType& t) {
  using K = LogicalType::Kind;
  switch (t.kind) {
    case K::kNone: return "NONE";
    case K::kString: return "STRING";
    case K::kMap: return "MAP";
    case K::kList: return "LIST";
    case K::kEnum: return "ENUM";
    case K::kDecimal: return fmt::format("DECIMAL({},{})", t.precision, t.scale);
    case K::kDate: return "DATE";
    case K::kTime: return fmt::format("TIME({},{})", unit_name(t.unit), t.adjusted_to_utc ? "UTC" : "local");
    case K::kTimestamp:
      return fmt::format("TIMESTAMP({},{})", unit_name(t.unit), t.adjusted_to_utc ? "UTC" : "local");
    case K::kInteger: return fmt::format("INT({},{})", static_cast<int>(t.bit_width), t.is_signed ? "signed" : "unsigned");
    case K::kUnknown: return "UNKNOWN";
    case K::kJson: return "JSON";
    case K::kBson: return "BSON";
    case K::kUuid: return "UUID";
    case K::kFloat16: return "FLOAT16";
    case K::kOther: return "OTHER";
  }
  return "?";
}

int fixed_width(PhysicalType t) {
  switch (t) {
    case PhysicalType::kBoolean: return 1;
    case PhysicalType::kInt32: return 4;
    case PhysicalType::kInt64: return 8;
    case PhysicalType::kInt96: return 12;
    case PhysicalType::kFloat: return 4;
    case PhysicalType::kDouble: return 8;
    case PhysicalType::kByteArray: return 0;
    case PhysicalType::kFixedLenByteArray: return 0;
  }
  return 0;
}

float float16_to_float(uint16_t bits) {
  const bool negative = (bits & 0x8000) != 0;
  const int exponent = (bits >> 10) & 0x1f;
  const int fraction = bits & 0x3ff;
  float v;
  if (exponent == 0) {
    v = std::ldexp(static_cast<float>(fraction), -24);  // zero and subnormals: fraction * 2^-24
  } else if (exponent == 31) {
    v = fraction == 0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  } else {
    v = std::ldexp(static_cast<float>(fraction + 1024), exponent - 25);  // (1 + f/1024) * 2^(e-15)
  }
  return negative ? -v : v;
}

}  // namespace tzrec::parquet
