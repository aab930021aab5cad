// A worker's stream of RecordBatches, each tagged with the input files its rows came from, so
// the consumer can track a resumable ReadPosition (no torch).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "data/record_batch.h"

namespace tzrec::data {

struct SourcedBatch {
  RecordBatch records;
  // file_ids[i]: index in the expanded input file list of records.files[i].
  std::vector<int32_t> file_ids;
};

// Rows of a batch per input file: (file id, rows). Rows of one file are consecutive.
std::vector<std::pair<int32_t, int64_t>> rows_per_file(const SourcedBatch& batch);

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  // The next batch, or nullopt when the source is exhausted. Throws DataError on bad input.
  virtual std::optional<SourcedBatch> next() = 0;
};

}  // namespace tzrec::data
