// A 64-bit key of where a batch row came from, for the random streams keyed by data position
// (negative and TDM sampling of a batch, expr features' rand() of a row): the same in every run,
// after --continue_train, and wherever the data lies. It hashes (base/stable_hash.h) the row's
// file by its last two path components — the file's name and its folder's name, so partitions
// such as "dt=20261201/part-0.parquet" and "dt=20261202/part-0.parquet" differ, and a copy of the
// data elsewhere keeps its keys — and the row's line (text files) or row index (Parquet; Kafka:
// "topic T partition P" and the message offset).
#pragma once

#include <cstdint>
#include <string_view>

#include "data/record_batch.h"

namespace tzrec::data {

// "dt=1/part-0.parquet" of "/data/t/dt=1/part-0.parquet"; the whole text when it has one or no '/'.
std::string_view file_key_text(std::string_view path);

// The key of batch row `row`.
uint64_t row_key(const RecordBatch& batch, int64_t row);

}  // namespace tzrec::data
