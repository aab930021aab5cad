// data_config.shuffle in training (no torch): batches handed out in a random order within windows
// of shuffle_buffer_size batches.
//
// TorchEasyRec keeps a buffer of shuffle_buffer_size batches and, once it is full, hands out a
// random one for each batch read (tzrec/datasets/dataset.py, BaseReader._arrow_reader_iter); its
// checkpoints keep the largest row read per file, so the batches still in the buffer are skipped
// by a resumed run. This engine shuffles in windows instead, so that --continue_train resumes
// exactly: a ShuffleBatchSource reads the next shuffle_buffer_size batches of its worker (fewer at
// the end) and hands them out in a permutation drawn from the seed, the epoch and the window's
// first row (its file and row), the same however the run was interrupted. Each batch tells the
// read position what it completes (SourcedBatch::completes): nothing until the window's last
// batch, which completes the whole window, and how many of the window's batches are out
// (SourcedBatch::window_delivered, saved as ReadPosition::worker_window). A loader resumed from
// such a position reads the window again, draws the same permutation and skips the batches
// already handed out. A batch moves at most shuffle_buffer_size - 1 places (TorchEasyRec's buffer
// may hold one back longer); input files are not reordered.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "data/batch_source.h"

namespace tzrec::data {

struct ShuffleOptions {
  int64_t window_batches = 32;  // data_config.shuffle_buffer_size
  uint64_t seed = 0;            // the run's seed mixed with the epoch
  int64_t skip = 0;             // batches of the first window handed out before a resume
};

class ShuffleBatchSource : public BatchSource {
 public:
  ShuffleBatchSource(std::unique_ptr<BatchSource> inner, ShuffleOptions options);

  std::optional<SourcedBatch> next() override;
  void cancel() override { inner_->cancel(); }

 private:
  // Reads the next window and draws its order; false when the input is done.
  bool fill();

  std::unique_ptr<BatchSource> inner_;
  ShuffleOptions options_;
  std::vector<SourcedBatch> window_;
  std::vector<size_t> order_;
  std::vector<std::pair<int32_t, int64_t>> window_rows_;  // rows per file of the whole window
  size_t out_ = 0;                                         // batches of window_ handed out
};

}  // namespace tzrec::data
