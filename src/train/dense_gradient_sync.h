// Data-parallel dense parameters: after backward, every rank's dense gradients are replaced by
// their mean over the ranks (DistributedDataParallel's all-reduce), in buckets of about
// `bucket_bytes` so that large models do not need one huge buffer. Parameters without a gradient
// on this rank (unused in this step) contribute zeros, so every rank issues the same collectives.
// After sync() the dense parameters see identical gradients everywhere, so the dense optimizer
// steps keep them identical and gradient clipping sees the global norm.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "dist/process_group.h"

namespace tzrec::train {

class DenseGradientSync {
 public:
  // params: the dense parameters, in the same order on every rank (float32 CPU).
  DenseGradientSync(std::shared_ptr<dist::ProcessGroup> pg, std::vector<torch::Tensor> params,
                    int64_t bucket_bytes = 25 << 20);

  // Averages the gradients over the ranks, in place. No-op on a single process.
  void sync();

  // Copies rank 0's parameter values to every rank (initial weights must agree before the first
  // step: each rank initialises its own model).
  void broadcast_parameters();

  int64_t num_buckets() const { return static_cast<int64_t>(buckets_.size()); }

 private:
  std::shared_ptr<dist::ProcessGroup> pg_;
  std::vector<torch::Tensor> params_;
  std::vector<std::vector<size_t>> buckets_;  // parameter indices per bucket
};

}  // namespace tzrec::train
