// A bounded uniform sample of a stream of rows (Vitter's Algorithm R; TorchEasyRec
// ReservoirSampler, tzrec/modules/sid/kmeans_quantize.py): RQ-KMeans keeps a sample of the
// training embeddings for its one k-means fit at the end of training, in O(capacity) memory.
//
// The buffer [capacity, dim] float32 (CPU) is allocated by the first add(). Rows fill it in order;
// afterwards the row at stream position p (0-based) is kept with probability capacity / (p + 1),
// replacing a uniformly drawn slot. The draws use torch's default generator with TorchEasyRec's
// calls (torch.rand for acceptance, torch.randint for the slots, one of each per batch), so the
// same seed gives the same sample.
#pragma once

#include <cstdint>

#include <torch/torch.h>

namespace tzrec::nn::sid {

class ReservoirSampler {
 public:
  ReservoirSampler(int64_t capacity, int64_t dim);
  // x: [B, dim] (any float dtype, detached) → streamed into the sample.
  void add(const torch::Tensor& x);
  // The filled rows [n_filled, dim] float32 (a view of the buffer; [0, dim] when empty).
  torch::Tensor sample() const;
  // Frees the buffer and zeroes the counters.
  void reset();

  int64_t capacity() const { return capacity_; }
  int64_t n_seen() const { return n_seen_; }
  int64_t n_filled() const { return n_filled_; }

 private:
  int64_t capacity_;
  int64_t dim_;
  torch::Tensor buffer_;
  int64_t n_filled_ = 0;
  int64_t n_seen_ = 0;
};

}  // namespace tzrec::nn::sid
