#include "retrieval/exact_top_k.h"

#include <limits>
#include <utility>

namespace tzrec::retrieval {

ExactTopK::ExactTopK(torch::Tensor queries, int64_t k, Metric metric)
    : queries_(std::move(queries)), k_(k), metric_(metric) {
  TORCH_CHECK(queries_.dim() == 2 && queries_.scalar_type() == torch::kFloat32, "queries must be [Q, D] float32");
  TORCH_CHECK(k_ >= 1, "k must be >= 1");
  if (metric_ == Metric::kL2) query_norms_ = queries_.pow(2).sum(1, /*keepdim=*/true);
  scores_ = torch::empty({queries_.size(0), 0}, torch::kFloat32);
  indices_ = torch::empty({queries_.size(0), 0}, torch::kInt64);
}

void ExactTopK::add_items(const torch::Tensor& items, int64_t first_index) {
  TORCH_CHECK(items.dim() == 2 && items.size(1) == queries_.size(1) && items.scalar_type() == torch::kFloat32,
              "items must be [N, ", queries_.size(1), "] float32");
  if (items.size(0) == 0) return;
  torch::NoGradGuard no_grad;
  torch::Tensor block = torch::mm(queries_, items.t());  // [Q, N] inner products
  const bool largest = metric_ == Metric::kInnerProduct;
  if (!largest) {
    // |q − x|² = |q|² + |x|² − 2 q·x
    block = (query_norms_ + items.pow(2).sum(1).unsqueeze(0)).sub_(block, 2.0);
  }
  const int64_t q = queries_.size(0);
  torch::Tensor cand_scores, cand_indices;  // this block's candidates, [Q, m]
  if (scores_.size(1) < k_) {
    cand_scores = block;
    cand_indices = torch::arange(first_index, first_index + items.size(0), torch::kInt64).unsqueeze(0).expand(
        {q, items.size(0)});
  } else {
    // Only scores strictly better than a row's current k-th can enter it (a tie loses to the
    // earlier item already kept): one vectorised compare, then the few survivors are merged.
    torch::Tensor worst = scores_.select(1, k_ - 1).unsqueeze(1);
    torch::Tensor better = largest ? block.gt(worst) : block.lt(worst);
    torch::Tensor counts = better.sum(1);
    const int64_t m = counts.max().item<int64_t>();
    if (m == 0) return;
    torch::Tensor hit = better.nonzero();  // [S, 2] (row, column), row-major
    torch::Tensor rows = hit.select(1, 0), cols = hit.select(1, 1);
    // Position of each survivor within its row.
    torch::Tensor row_start = torch::cumsum(counts, 0) - counts;
    torch::Tensor slot = torch::arange(hit.size(0), torch::kInt64) - row_start.index_select(0, rows);
    const float pad = largest ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
    cand_scores = torch::full({q, m}, pad, torch::kFloat32);
    cand_indices = torch::full({q, m}, std::numeric_limits<int64_t>::max(), torch::kInt64);
    cand_scores.index_put_({rows, slot}, block.index({rows, cols}));
    cand_indices.index_put_({rows, slot}, cols + first_index);
  }
  torch::Tensor scores = torch::cat({scores_, cand_scores}, 1);
  torch::Tensor indices = torch::cat({indices_, cand_indices}, 1);
  const int64_t seen = std::min<int64_t>(k_, scores_.size(1) + items.size(0));
  // Order by score, ties by item index (the earlier item first): sort by index, then a stable
  // sort by score.
  torch::Tensor by_index = std::get<1>(indices.sort(1));
  scores = scores.gather(1, by_index);
  indices = indices.gather(1, by_index);
  torch::Tensor order = std::get<1>(scores.sort(/*stable=*/true, 1, /*descending=*/largest));
  scores_ = scores.gather(1, order).slice(1, 0, seen).contiguous();
  indices_ = indices.gather(1, order).slice(1, 0, seen).contiguous();
}

}  // namespace tzrec::retrieval
