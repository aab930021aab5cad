// Rows of a Table as JSON objects (for `tzrec parquet_cat`, debugging and the corpus tests).
//
// Conventions: one object per row, fields by top-level name in table order; lists → arrays
// (null list → null, null element → null); maps of primitives → objects; groups of several
// leaves → objects; INT96 and TIMESTAMP values → ISO-8601 UTC strings with milliseconds
// ("2009-01-01T00:00:00.000Z"); DATE → "YYYY-MM-DD"; DECIMAL → decimal strings; unsigned
// integer annotations → unsigned numbers; NaN → null; BYTE_ARRAY → strings (raw bytes; invalid
// UTF-8 is replaced when dumping).
#pragma once

#include <cstdint>
#include <string>

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

// "2009-01-01T00:00:00.000Z" for milliseconds since the Unix epoch.
std::string iso8601_millis(int64_t millis);

}  // namespace tzrec::parquet
