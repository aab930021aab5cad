// Recall@K (tzrec metric "recall_at_k", docs/tzrec-compatibility.md §7.2), for match models: per row of the
// similarity matrix, the number of true targets among the row's top-k columns; result =
// Σ hits / Σ targets over every row seen. The caller names the result "recall@{top_k}".
//
// Ranking: columns ordered by decreasing similarity; equal similarities keep column order (the
// lower column index ranks first). TorchEasyRec uses torch.argsort(descending=True), whose order
// among equal values is unspecified. top_k larger than the number of columns takes every column.
// Mergeable: the state is two counts.
#pragma once

#include <cstdint>

#include <torch/torch.h>

#include "dist/process_group.h"

namespace tzrec::metrics {

// Where the true targets of a match model's similarity matrix are
// (docs/tzrec-compatibility.md §7.1 / §7.2).
enum class RecallTarget {
  kFirstColumn,  // sampled negatives: column 0 of each row is the positive item
  kDiagonal,     // in-batch negatives: column i of row i (torch.eye of the matrix shape)
};

// The bool targets [B, N] of `similarity` [B, N] under `mode`, on its device. Throws
// tzrec::UsageError when similarity is not 2-D.
torch::Tensor recall_targets(const torch::Tensor& similarity, RecallTarget mode);

class RecallAtK {
 public:
  // Throws tzrec::ConfigError when top_k < 1.
  explicit RecallAtK(int64_t top_k = 5);

  // similarity: [B, N] floating; target: [B, N] bool (or 0 / 1) marking the true targets.
  // Throws tzrec::DataError for NaN similarities, tzrec::UsageError for mismatched shapes.
  void update(const torch::Tensor& similarity, const torch::Tensor& target);
  // Same with the targets implied by `mode`.
  void update(const torch::Tensor& similarity, RecallTarget mode);
  void merge(const RecallAtK& other);
  // Sums the counts of every rank (metrics/metric_sync.h contract).
  void sync(dist::ProcessGroup& pg);
  // hits / targets; NaN when no target was seen (0 / 0, as TorchEasyRec).
  double compute() const;
  void reset();

  int64_t top_k() const { return top_k_; }
  int64_t num_hits() const { return num_hits_; }
  int64_t num_targets() const { return num_targets_; }

 private:
  int64_t top_k_;
  int64_t num_hits_ = 0;
  int64_t num_targets_ = 0;
  bool synced_ = false;
};

}  // namespace tzrec::metrics
