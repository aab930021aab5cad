// Rows of a Table as JSON objects (for `tzrec parquet_cat`, debugging and the corpus tests).
//
// Conventions: one object per row, fields by top-level name in table order. Records are
// assembled from the schema tree at any depth: structs (groups) → objects of their projected
// children, a present struct whose children are all null → {"child": null}, a null struct →
// null; LIST (three-level, legacy two-level, bare `repeated` fields) → arrays (null list → null,
// null element → null); MAP → objects keyed by the key's value (non-string keys as their JSON
// text), values assembled like any field (so maps of maps, maps of lists and lists of structs
// nest). Values: INT96 and TIMESTAMP → ISO-8601 UTC strings with milliseconds
// ("2009-01-01T00:00:00.000Z"; years outside 0..9999 as a sign and six digits,
// "+290000-12-30T23:00:00.000Z"); INT96 is converted as Spark and parquet-mr do (64-bit
// microseconds: (julian_day - 2440588) * 86400000000 + nanos / 1000, wrapping on overflow);
// DATE → "YYYY-MM-DD"; DECIMAL → a JSON string holding the exact decimal value ("1.00",
// "-12345678901234567890123.4567890"; any precision, never through binary floating point);
// FLOAT16 → a number; unsigned integer annotations → unsigned numbers; NaN → null; BYTE_ARRAY →
// strings (raw bytes; invalid UTF-8 is replaced when dumping).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "parquet/column_data.h"
#include "parquet/schema.h"

namespace tzrec::parquet {

// Keys keep the table's column order.
using Json = nlohmann::ordered_json;

struct JsonOptions {
  bool int64_as_string = false;  // exact decimal strings for INT64 (JSON readers often use doubles)
};

// Row `row` of `table` (whose columns come from `schema`).
Json row_to_json(const Table& table, const Schema& schema, int64_t row, const JsonOptions& options = {});

// One leaf slot's value (null when the slot is null).
Json value_to_json(const ColumnData& column, int64_t slot, const JsonOptions& options = {});

// "2009-01-01T00:00:00.000Z" for milliseconds since the Unix epoch (proleptic Gregorian; years
// outside 0..9999 as "+290000-..." / "-004128-...", as ECMAScript's toISOString writes them).
std::string iso8601_millis(int64_t millis);

// Microseconds since the Unix epoch of a 12-byte INT96 timestamp (8 bytes nanoseconds of the
// day, then 4 bytes Julian day, little-endian), computed as Spark and parquet-mr do.
int64_t int96_to_micros(const uint8_t* value);

// The exact decimal text of a big-endian two's complement integer of any length scaled by
// 10^-scale ("-1.50" for bytes {0xff, 0x6a} and scale 2).
std::string decimal_from_be_bytes(std::string_view bytes, int scale);

}  // namespace tzrec::parquet
