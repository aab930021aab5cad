#include "data/shuffle_batch_source.h"

#include <fmt/format.h>

#include "base/error.h"
#include "base/stable_hash.h"

namespace tzrec::data {

ShuffleBatchSource::ShuffleBatchSource(std::unique_ptr<BatchSource> inner, ShuffleOptions options)
    : inner_(std::move(inner)), options_(options) {}

bool ShuffleBatchSource::fill() {
  window_.clear();
  window_rows_.clear();
  out_ = 0;
  while (static_cast<int64_t>(window_.size()) < std::max<int64_t>(options_.window_batches, 1)) {
    std::optional<SourcedBatch> b = inner_->next();
    if (!b) break;
    // Streams are not shuffled (config/stream_batches.h): their positions are per message.
    if (!b->stream_marks.empty()) throw std::logic_error("ShuffleBatchSource over a stream");
    for (const auto& [file, rows] : rows_per_file(*b)) {
      if (!window_rows_.empty() && window_rows_.back().first == file) {
        window_rows_.back().second += rows;
      } else {
        window_rows_.emplace_back(file, rows);
      }
    }
    window_.push_back(std::move(*b));
  }
  if (window_.empty()) return false;
  // The order: Fisher-Yates from the seed and the window's first row (file, row).
  const SourcedBatch& first = window_.front();
  const RowOrigin origin = first.records.origins.at(0);
  SplitMix64 rng(chain_seed(options_.seed, {static_cast<uint64_t>(first.file_ids.at(static_cast<size_t>(origin.file_index))),
                                            static_cast<uint64_t>(origin.line)}));
  order_.resize(window_.size());
  for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
  for (size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng.next() % i]);
  if (options_.skip > 0) {  // resumed inside this window
    if (options_.skip >= static_cast<int64_t>(window_.size())) {
      throw DataError(fmt::format(
          "the read position says {} batches of a shuffle window were trained, but the window now has {}; the "
          "input changed since the checkpoint",
          options_.skip, window_.size()));
    }
    out_ = static_cast<size_t>(options_.skip);
    options_.skip = 0;
  }
  return true;
}

std::optional<SourcedBatch> ShuffleBatchSource::next() {
  if (out_ == window_.size() && !fill()) return std::nullopt;
  SourcedBatch b = std::move(window_[order_[out_++]]);
  if (out_ == window_.size()) {
    b.completes = window_rows_;
    b.window_delivered = 0;
  } else {
    b.completes = std::vector<std::pair<int32_t, int64_t>>{};
    b.window_delivered = static_cast<int64_t>(out_);
  }
  return b;
}

}  // namespace tzrec::data
