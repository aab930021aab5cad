// A worker's stream of RecordBatches, each tagged with the input files its rows came from, so
// the consumer can track a resumable ReadPosition (no torch).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "data/read_position.h"
#include "data/record_batch.h"

namespace tzrec::data {

struct SourcedBatch {
  RecordBatch records;
  // file_ids[i]: index in the expanded input file list of records.files[i].
  std::vector<int32_t> file_ids;
  // Streams (KafkaDataset): where each partition the batch read from stands after it.
  std::vector<PartitionPosition> stream_marks;
  // Streams: the latest event time of the batch's rows (seconds since the Unix epoch; the
  // messages' timestamps), -1 when unknown.
  double data_timestamp = -1.0;
  // Sources that reorder batches (shuffle_batch_source.h): the rows per file (file id, rows) the
  // read position counts as consumed once this batch is delivered, instead of the batch's own
  // rows, and how many batches of the worker's current window are out with it (0: none pending).
  std::optional<std::vector<std::pair<int32_t, int64_t>>> completes;
  int64_t window_delivered = 0;
};

// Rows of a batch per input file: (file id, rows). Rows of one file are consecutive.
std::vector<std::pair<int32_t, int64_t>> rows_per_file(const SourcedBatch& batch);

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  // The next batch, or nullopt when the source is exhausted. Throws DataError on bad input.
  virtual std::optional<SourcedBatch> next() = 0;
  // Called from another thread when the consumer stops: a next() that is waiting for input (a
  // stream) returns nullopt soon. Sources that never wait need not do anything.
  virtual void cancel() {}
};

}  // namespace tzrec::data
