// Exact top-K search of query vectors over an item table, as the index of TorchEasyRec's hitrate
// tool ranks them (faiss metrics, docs/tzrec-compatibility.md §3.5): inner product (larger is
// nearer) or squared L2 distance (smaller is nearer).
//
// Items arrive in blocks (add_items), so the table is scanned once per query batch without a
// [Q, N] score matrix: each block's scores (one GEMM) are merged into the running top K.
#pragma once

#include <cstdint>

#include <torch/torch.h>

namespace tzrec::retrieval {

enum class Metric { kInnerProduct, kL2 };

class ExactTopK {
 public:
  // queries [Q, D] float32; k ≥ 1.
  ExactTopK(torch::Tensor queries, int64_t k, Metric metric);

  // items [N, D] float32, whose rows are items first_index .. first_index + N - 1.
  void add_items(const torch::Tensor& items, int64_t first_index);

  // [Q, min(k, items seen)]: scores (inner products, descending / squared distances, ascending)
  // and item indices. Among equal scores the earlier item comes first.
  const torch::Tensor& scores() const { return scores_; }
  const torch::Tensor& indices() const { return indices_; }

 private:
  torch::Tensor queries_;
  torch::Tensor query_norms_;  // L2: |q|², [Q, 1]
  int64_t k_;
  Metric metric_;
  torch::Tensor scores_;   // [Q, ≤ k]
  torch::Tensor indices_;  // [Q, ≤ k] int64
};

}  // namespace tzrec::retrieval
