#include "retrieval/hitrate.h"

#include <algorithm>
#include <numeric>
#include <unordered_set>

namespace tzrec::retrieval {

RequestHits request_hits(const std::vector<std::vector<std::string>>& recalled, const std::vector<std::string>& gt,
                         int64_t valid_interests) {
  RequestHits out;
  const std::unordered_set<std::string> truth(gt.begin(), gt.end());
  if (truth.empty()) {
    out.skipped = true;
    return out;
  }
  std::unordered_set<std::string> hit;
  const auto interests = std::min<int64_t>(valid_interests, static_cast<int64_t>(recalled.size()));
  for (int64_t i = 0; i < interests; ++i) {
    for (const std::string& id : recalled[static_cast<size_t>(i)]) {
      if (truth.count(id) && hit.insert(id).second) out.hit_ids.push_back(id);
    }
  }
  out.hits = static_cast<double>(hit.size());
  out.gt_count = static_cast<double>(truth.size());
  out.hitrate = out.hits / out.gt_count;
  return out;
}

void merge_interests(const torch::Tensor& scores, const torch::Tensor& indices, const torch::Tensor& query_nonzero,
                     int64_t valid_interests, int64_t k, Metric metric, std::vector<float>* merged_scores,
                     std::vector<int64_t>* merged_indices) {
  struct Candidate {
    float score;
    int64_t index;
  };
  std::vector<Candidate> candidates;
  const int64_t interests = std::min<int64_t>(valid_interests, scores.size(0));
  auto s = scores.accessor<float, 2>();
  auto ix = indices.accessor<int64_t, 2>();
  auto nz = query_nonzero.accessor<bool, 1>();
  for (int64_t i = 0; i < interests; ++i) {
    if (!nz[i]) continue;  // an all-zero interest recalls nothing
    for (int64_t j = 0; j < scores.size(1); ++j) candidates.push_back({s[i][j], ix[i][j]});
  }
  const bool larger_is_better = metric == Metric::kInnerProduct;
  std::stable_sort(candidates.begin(), candidates.end(), [&](const Candidate& a, const Candidate& b) {
    if (a.score != b.score) return larger_is_better ? a.score > b.score : a.score < b.score;
    return a.index < b.index;
  });
  std::unordered_set<int64_t> seen;
  merged_scores->clear();
  merged_indices->clear();
  for (const Candidate& c : candidates) {
    if (static_cast<int64_t>(merged_indices->size()) >= k) break;
    if (!seen.insert(c.index).second) continue;
    merged_scores->push_back(c.score);
    merged_indices->push_back(c.index);
  }
}

}  // namespace tzrec::retrieval
