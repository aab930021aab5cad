// Batches cut by cost (data_config.batch_cost_size with sample_cost_field; no torch): TorchEasyRec
// cuts dynamic batches so that the summed per-row cost of a batch (for DlrmHSTU, the tokens a row
// puts into the model) stays within the limit (tzrec/datasets/dataset.py, BaseReader).
//
// A CostBatchSource wraps a worker's source, which cuts batch_size rows per batch, and re-cuts
// its rows, in order: it reads ahead until at least batch_size rows are waiting (or the input is
// done), and each batch is the longest run of the next rows, at most batch_size of them, whose
// summed cost is <= batch_cost_size. The cut depends only on the row sequence, not on how
// the inner source cut it, so a loader resumed from a read position (a prefix of each worker's
// rows) cuts the same batches as the uninterrupted run. With drop_remainder, the rows left at
// the end, once fewer than batch_size are waiting, are dropped, as TorchEasyRec drops its buffer
// (the inner source then keeps its last partial batch).
//
// This engine's decisions where TorchEasyRec's reader leaves it to chance: at most batch_size
// rows per batch (TorchEasyRec's cut reaches as far as its read buffer, which depends on the
// file's record batches); a row whose cost alone is above the limit, a negative, NaN or missing
// cost, and a cost column that is not a number are data errors naming the file and row
// (TorchEasyRec would yield empty batches forever or fail in Arrow).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "data/batch_source.h"

namespace tzrec::data {

struct CostBatchOptions {
  std::string cost_field;  // data_config.sample_cost_field: a column of the inner batches
  double batch_cost_size = 0;
  int64_t batch_size = 1;
  bool drop_remainder = false;
};

class CostBatchSource : public BatchSource {
 public:
  CostBatchSource(std::unique_ptr<BatchSource> inner, CostBatchOptions options);

  std::optional<SourcedBatch> next() override;
  void cancel() override { inner_->cancel(); }

 private:
  // Appends the inner source's next batch to pending_; false when it has none left.
  bool pull();
  // The cost of pending_ row `row` (DataError for a bad one).
  double cost(int64_t row) const;

  std::unique_ptr<BatchSource> inner_;
  CostBatchOptions options_;
  SourcedBatch pending_;       // rows read, in order
  int64_t pending_start_ = 0;  // rows of pending_ before this one are given out already
  bool exhausted_ = false;
};

}  // namespace tzrec::data
