// HitRate of retrieval results, as TorchEasyRec's hitrate tool computes it
// (docs/tzrec-compatibility.md §3.5): per request, the share of its ground-truth items found among
// the top K recalled items of its interests; in total, hits over ground-truth items of all requests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "retrieval/exact_top_k.h"

namespace tzrec::retrieval {

struct RequestHits {
  bool skipped = false;  // no ground-truth item: not counted
  double hitrate = 0.0;  // hits / distinct ground-truth items
  std::vector<std::string> hit_ids;  // in the order they were recalled
  double hits = 0.0;
  double gt_count = 0.0;
};

// recalled[i]: the item ids interest i recalled (best first); only the first `valid_interests`
// interests count. Ground truth counts distinct ids.
RequestHits request_hits(const std::vector<std::vector<std::string>>& recalled, const std::vector<std::string>& gt,
                         int64_t valid_interests);

// The top K across the interests of one request: candidates of every valid interest whose query is
// not all zeros, best first by `metric`, each item once (at its best score); scores / indices are
// [I, k] rows of ExactTopK, query_nonzero [I].
void merge_interests(const torch::Tensor& scores, const torch::Tensor& indices, const torch::Tensor& query_nonzero,
                     int64_t valid_interests, int64_t k, Metric metric, std::vector<float>* merged_scores,
                     std::vector<int64_t>* merged_indices);

}  // namespace tzrec::retrieval
