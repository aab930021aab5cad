// The types pyarrow's read_csv infers for text columns of int64 / double / string values, as
// TorchEasyRec's CsvReader reads a CSV without given column types (no torch): a column whose
// non-null cells are all integers is int64, else all numbers double, else string. In number
// columns pyarrow's null spellings ("", "NULL", "null", "NaN", "nan", "N/A", "NA", "#N/A", ...)
// are nulls; string cells stay as they are ("" an empty string).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "data/record_batch.h"

namespace tzrec::data {

enum class CsvValueType { kInt64, kDouble, kString };

// pyarrow's default null spellings of number columns.
bool csv_null_text(std::string_view s);

// The whole cell as an int64 / a double (an optional leading '+'); false when it is not one.
bool parse_csv_int64(std::string_view s, int64_t* out);
bool parse_csv_double(std::string_view s, double* out);

// The inferred type of a column of `cells`.
CsvValueType infer_csv_value_type(const std::vector<std::string_view>& cells);

// `column` as a typed (Parquet-layout) column of its inferred type: a nullable INT64, DOUBLE or
// STRING column with the same rows.
TypedColumn typed_csv_column(const StringColumn& column);

}  // namespace tzrec::data
