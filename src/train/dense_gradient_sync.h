// Data-parallel dense parameters: every rank's dense gradients are replaced by their mean over the
// ranks (DistributedDataParallel's all-reduce), in buckets, overlapped with backward as DDP does:
// each parameter's gradient hook copies the gradient into its bucket, and a bucket is all-reduced
// (asynchronously) as soon as all of its gradients are in, while autograd computes the rest.
// Buckets hold the parameters in reverse order (the order backward produces their gradients), the
// first up to `first_bucket_bytes`, the others up to `bucket_bytes` (DDP's 1 MiB and 25 MiB), and
// are started strictly in bucket order, so every rank issues the same collectives in the same
// order. A bucket whose parameters did not all get a gradient in this backward (unused
// parameters: they contribute their current gradient or zeros) is reduced in finish().
// After finish() the dense parameters see identical gradients everywhere, so the dense optimizer
// steps keep them identical and gradient clipping sees the global norm.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "dist/process_group.h"

namespace tzrec::train {

class DenseGradientSync {
 public:
  // params: the dense parameters, in the same order on every rank (float32 CPU), in registration
  // order (forward order). Registers a gradient hook on each (removed by the destructor).
  DenseGradientSync(std::shared_ptr<dist::ProcessGroup> pg, std::vector<torch::Tensor> params,
                    int64_t bucket_bytes = 25 << 20, int64_t first_bucket_bytes = 1 << 20);
  ~DenseGradientSync();
  DenseGradientSync(const DenseGradientSync&) = delete;
  DenseGradientSync& operator=(const DenseGradientSync&) = delete;

  // Arms the hooks for the next backward (whose gradients are the step's: the last micro-batch of
  // gradient accumulation). No-op on a single process.
  void prepare_for_backward();
  // After that backward: waits for the buckets in flight, reduces the ones not started, and writes
  // the mean over the ranks into every parameter's .grad (the sum of this backward's gradient and
  // what .grad held before it, as autograd accumulates). Without prepare_for_backward(), reduces
  // every bucket from .grad. No-op on a single process.
  void finish();

  // Copies rank 0's parameter values to every rank (initial weights must agree before the first
  // step: each rank initialises its own model).
  void broadcast_parameters();

  int64_t num_buckets() const { return static_cast<int64_t>(buckets_.size()); }
  // Buckets of the last finish() that were started inside backward (overlapped).
  int64_t overlapped_buckets() const { return overlapped_; }

 private:
  struct Bucket {
    std::vector<size_t> params;  // indices into params_
    std::vector<int64_t> offsets;  // of each parameter in `flat`
    torch::Tensor flat;            // [Σ numel] float32
    size_t ready = 0;              // parameters whose gradient is in `flat`
    dist::PendingCollective pending;
    bool started = false;
  };
  bool distributed() const { return pg_ != nullptr && pg_->world_size() > 1; }
  void on_gradient(size_t param, const torch::Tensor& grad);
  // Starts the buckets from next_bucket_ on that are complete, in order.
  void start_ready_buckets();
  // .grad of `param` (or zeros) into its bucket slot.
  void fill_from_grad(size_t param);

  std::shared_ptr<dist::ProcessGroup> pg_;
  std::vector<torch::Tensor> params_;
  std::vector<Bucket> buckets_;
  std::vector<std::pair<size_t, size_t>> slot_of_;  // param → (bucket, index in bucket)
  std::vector<bool> has_gradient_;                  // this backward
  std::vector<std::pair<size_t, unsigned>> hooks_;  // (param, hook handle)
  bool armed_ = false;
  size_t next_bucket_ = 0;
  int64_t overlapped_ = 0;
  bool reported_ = false;  // the first armed finish() logs the overlap
};

}  // namespace tzrec::train
