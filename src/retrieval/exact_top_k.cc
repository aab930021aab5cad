#include "retrieval/exact_top_k.h"

#include <algorithm>
#include <utility>

#include <ATen/Parallel.h>

namespace tzrec::retrieval {
namespace {

// Whether `a` ranks below `b`: a worse score, or an equal score and a later item.
struct RanksBelow {
  bool larger_is_better;
  bool operator()(const ExactTopK::Candidate& a, const ExactTopK::Candidate& b) const {
    if (a.score != b.score) return larger_is_better ? a.score < b.score : a.score > b.score;
    return a.index > b.index;
  }
};

}  // namespace

ExactTopK::ExactTopK(torch::Tensor queries, int64_t k, Metric metric)
    : queries_(std::move(queries)), k_(k), metric_(metric) {
  TORCH_CHECK(queries_.dim() == 2 && queries_.scalar_type() == torch::kFloat32, "queries must be [Q, D] float32");
  TORCH_CHECK(k_ >= 1, "k must be >= 1");
  queries_ = queries_.contiguous();
  if (metric_ == Metric::kL2) query_norms_ = queries_.pow(2).sum(1).contiguous();
  heaps_.resize(static_cast<size_t>(queries_.size(0)));
}

void ExactTopK::add_items(const torch::Tensor& items, int64_t first_index) {
  TORCH_CHECK(items.dim() == 2 && items.size(1) == queries_.size(1) && items.scalar_type() == torch::kFloat32,
              "items must be [N, ", queries_.size(1), "] float32");
  const int64_t n = items.size(0);
  if (n == 0) return;
  torch::NoGradGuard no_grad;
  const torch::Tensor block = torch::mm(queries_, items.t()).contiguous();  // [Q, N] inner products
  torch::Tensor item_norms;
  if (metric_ == Metric::kL2) item_norms = items.pow(2).sum(1).contiguous();
  const float* scores = block.data_ptr<float>();
  const float* qn = metric_ == Metric::kL2 ? query_norms_.data_ptr<float>() : nullptr;
  const float* xn = metric_ == Metric::kL2 ? item_norms.data_ptr<float>() : nullptr;
  const RanksBelow below{metric_ == Metric::kInnerProduct};
  // Heap order: the worst candidate on top.
  const auto above = [&below](const Candidate& a, const Candidate& b) { return below(b, a); };
  const auto k = static_cast<size_t>(k_);
  at::parallel_for(0, queries_.size(0), 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      std::vector<Candidate>& heap = heaps_[static_cast<size_t>(r)];
      const float* row = scores + r * n;
      for (int64_t j = 0; j < n; ++j) {
        // |q − x|² = |q|² + |x|² − 2 q·x
        const float s = xn == nullptr ? row[j] : qn[r] + xn[j] - 2.0f * row[j];
        const Candidate c{s, first_index + j};
        if (heap.size() < k) {
          heap.push_back(c);
          std::push_heap(heap.begin(), heap.end(), above);
        } else if (below(heap.front(), c)) {
          std::pop_heap(heap.begin(), heap.end(), above);
          heap.back() = c;
          std::push_heap(heap.begin(), heap.end(), above);
        }
      }
    }
  });
}

ExactTopK::Result ExactTopK::result() const {
  const auto q = static_cast<int64_t>(heaps_.size());
  const int64_t width = heaps_.empty() ? 0 : static_cast<int64_t>(heaps_.front().size());
  Result out{torch::empty({q, width}, torch::kFloat32), torch::empty({q, width}, torch::kInt64)};
  auto scores = out.scores.accessor<float, 2>();
  auto indices = out.indices.accessor<int64_t, 2>();
  const RanksBelow below{metric_ == Metric::kInnerProduct};
  for (int64_t r = 0; r < q; ++r) {
    std::vector<Candidate> row = heaps_[static_cast<size_t>(r)];
    std::sort(row.begin(), row.end(), [&](const Candidate& a, const Candidate& b) { return below(b, a); });
    for (int64_t j = 0; j < width; ++j) {
      scores[r][j] = row[static_cast<size_t>(j)].score;
      indices[r][j] = row[static_cast<size_t>(j)].index;
    }
  }
  return out;
}

}  // namespace tzrec::retrieval
