#include "parquet/errors.h"

#include <fmt/format.h>

namespace tzrec::parquet {

std::string ErrorContext::describe() const {
  std::string out = fmt::format("parquet file '{}'", file);
  if (row_group >= 0) out += fmt::format(", row group {}", row_group);
  if (!column.empty()) out += fmt::format(", column '{}'", column);
  if (page >= 0) out += fmt::format(", page {}", page);
  return out;
}

void throw_data_error(const ErrorContext& context, const std::string& message) {
  throw DataError(context.describe() + ": " + message);
}

void throw_decode_error(const std::string& message) { throw DecodeError(message); }

}  // namespace tzrec::parquet
