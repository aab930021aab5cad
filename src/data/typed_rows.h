// Rows of a column picked by index (no torch): the repeated and expanded rows that the TDM loader,
// TDM retrieval and online requests build from a batch's Parquet and text columns.
#pragma once

#include <cstdint>
#include <vector>

#include "data/record_batch.h"

namespace tzrec::data {

// Rows [0, prefix) of `column`, then row picks[i] for each i, as a new column of the same name,
// type and layout (a map's keys and values alike).
TypedColumn take_rows(const TypedColumn& column, int64_t prefix, const std::vector<int64_t>& picks);
// The same for a text column's cells.
StringColumn take_rows(const StringColumn& column, int64_t prefix, const std::vector<int64_t>& picks);

}  // namespace tzrec::data
