// TouchedIds: the raw ids of a remapped table (zero-collision hashed or dynamic) that training
// looked up, admitted or evicted since they were last taken — what a delta embedding dump
// publishes for such tables, keyed by raw id (train/delta_embedding_dump.h). Ids are kept as the
// batches give them and compacted to their distinct values whenever the pending ones outgrow the
// distinct ones, so memory follows the distinct ids of the interval, not its steps (TorchRec's
// auto_compact).
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

namespace tzrec::embedding {

class TouchedIds {
 public:
  // Keeps a copy of ids [N] (any integer type).
  void add(const torch::Tensor& ids);
  // The distinct ids [K] int64 ascending, then none are kept.
  torch::Tensor take();

 private:
  void compact();
  torch::Tensor distinct_ = torch::empty({0}, torch::kInt64);
  std::vector<torch::Tensor> pending_;
  int64_t pending_count_ = 0;
};

}  // namespace tzrec::embedding
