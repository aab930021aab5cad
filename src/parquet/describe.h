// Human-readable description of a Parquet file's metadata (for `tzrec parquet_meta`): schema,
// key/value metadata, row groups and their column chunks (codec, encodings, sizes, offsets).
#pragma once

#include <string>

#include "parquet/file_reader.h"

namespace tzrec::parquet {

std::string describe_file(const FileReader& reader);

}  // namespace tzrec::parquet
