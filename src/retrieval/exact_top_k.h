// Exact top-K search of query vectors over an item table, as the index of TorchEasyRec's hitrate
// tool ranks them (faiss metrics, docs/tzrec-compatibility.md §3.5): inner product (larger is
// nearer) or squared L2 distance (smaller is nearer).
//
// Items arrive in blocks (add_items), so the table is scanned once per query batch without a
// [Q, N] score matrix: each block's scores come from one matrix product, and each query's row of
// them is scanned once against that query's running top K (a heap whose worst entry is the bar a
// score must pass), rows in parallel.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

namespace tzrec::retrieval {

enum class Metric { kInnerProduct, kL2 };

class ExactTopK {
 public:
  // queries [Q, D] float32; k ≥ 1.
  ExactTopK(torch::Tensor queries, int64_t k, Metric metric);

  // items [N, D] float32, whose rows are items first_index .. first_index + N - 1; blocks come in
  // increasing first_index.
  void add_items(const torch::Tensor& items, int64_t first_index);

  // [Q, min(k, items seen)], best first: scores (inner products, descending / squared distances,
  // ascending) and item indices. Among equal scores the earlier item comes first.
  struct Result {
    torch::Tensor scores;   // float32
    torch::Tensor indices;  // int64
  };
  Result result() const;

  struct Candidate {
    float score;
    int64_t index;
  };

 private:
  torch::Tensor queries_;
  torch::Tensor query_norms_;  // L2: |q|², [Q]
  int64_t k_;
  Metric metric_;
  std::vector<std::vector<Candidate>> heaps_;  // per query: a heap with the worst candidate on top
};

}  // namespace tzrec::retrieval
