// Writes rows [first_row, first_row + num_rows) of a RowGenerator to one Parquet file (SNAPPY,
// dictionary encoding, row groups of `row_group_rows`), one column per plan column with the
// types of column_field(). The file is written as path + ".tmp" and renamed when complete.
// With a sampler, `pairs` (when not null) receives the (user, item) entity pair of every row
// (one per item of a sequence item id column; user -1 without a user id column).
// Throws IoError naming the file when it cannot be written.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "datagen/row_generator.h"

namespace tzrec::datagen {

void write_rows_parquet(const RowGenerator& rows, const std::string& path, int64_t first_row,
                        int64_t num_rows, int64_t row_group_rows = 65536,
                        std::vector<std::pair<int64_t, int64_t>>* pairs = nullptr);

}  // namespace tzrec::datagen
