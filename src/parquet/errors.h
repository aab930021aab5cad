// Error helpers of the Parquet library.
//
// Low-level decoders (thrift, RLE, delta, codecs) know only their bytes: they throw DecodeError
// with what is wrong. The page and column readers, which know the file, row group, column and
// page, catch it and rethrow a tzrec::DataError whose message names all four (ErrorContext).
#pragma once

#include <cstdint>
#include <string>

#include "base/error.h"

namespace tzrec::parquet {

// Corrupt or unsupported bytes, without location. Is-a DataError, so that an unwrapped one still
// reaches the user as a data error.
class DecodeError : public DataError {
 public:
  using DataError::DataError;
};

// Where in a file we are; unset parts (-1 / empty) are left out of messages.
struct ErrorContext {
  ErrorContext() = default;
  explicit ErrorContext(std::string file_name, int row_group_index = -1, std::string column_path = {})
      : file(std::move(file_name)), row_group(row_group_index), column(std::move(column_path)) {}

  std::string file;
  int row_group = -1;
  std::string column;
  int64_t page = -1;

  // "parquet file 'f.parquet', row group 2, column 'a.b', page 3"
  std::string describe() const;
};

// Throws DataError("<context>: <message>").
[[noreturn]] void throw_data_error(const ErrorContext& context, const std::string& message);

// Throws DecodeError(message).
[[noreturn]] void throw_decode_error(const std::string& message);

}  // namespace tzrec::parquet
