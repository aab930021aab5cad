// Row slicing and concatenation of ColumnData (no torch): used to cut fixed-size batches out of
// row groups, across row groups and files.
#pragma once

#include <cstdint>

#include "parquet/column_data.h"

namespace tzrec::parquet {

// Appends rows [begin, end) of `src` to `*dst`: list offsets and byte-array offsets are rebased
// onto dst's, validity is copied (and materialized as all-valid on the side that had none, so
// columns of files that differ only in nullability concatenate), fixed-width values are copied
// as one memcpy per run. dst keeps its descriptor.
// Throws DataError naming the column when the two columns differ in physical type, value width
// or list depth, and UsageError when [begin, end) is not inside [0, src.num_rows].
void append_rows(const ColumnData& src, int64_t begin, int64_t end, ColumnData* dst);

// Rows [begin, end) of `src` as a new column with src's descriptor.
ColumnData slice_rows(const ColumnData& src, int64_t begin, int64_t end);

}  // namespace tzrec::parquet
