#include "retrieval/exact_top_k.h"

#include <algorithm>
#include <utility>

#include "nn/parallel.h"

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

// Tiles of the score matrix: each thread computes a [kTileRows, kTileCols] block of scores with a
// single-threaded GEMM into its own buffer (1 MiB: it stays in the cache) and scans it at once,
// instead of one [Q, N] product written to memory and read back.
constexpr int64_t kTileRows = 128;
constexpr int64_t kTileCols = 2048;

void ExactTopK::add_items(const torch::Tensor& items_in, int64_t first_index) {
  TORCH_CHECK(items_in.dim() == 2 && items_in.size(1) == queries_.size(1) && items_in.scalar_type() == torch::kFloat32,
              "items must be [N, ", queries_.size(1), "] float32");
  const int64_t n = items_in.size(0);
  if (n == 0) return;
  torch::NoGradGuard no_grad;
  const torch::Tensor items = items_in.contiguous();
  torch::Tensor item_norms;
  if (metric_ == Metric::kL2) item_norms = items.pow(2).sum(1).contiguous();
  const float* qn = metric_ == Metric::kL2 ? query_norms_.data_ptr<float>() : nullptr;
  const float* xn = metric_ == Metric::kL2 ? item_norms.data_ptr<float>() : nullptr;
  const bool larger_is_better = metric_ == Metric::kInnerProduct;
  const RanksBelow below{larger_is_better};
  // Heap order: the worst candidate on top.
  const auto above = [&below](const Candidate& a, const Candidate& b) { return below(b, a); };
  const auto k = static_cast<size_t>(k_);
  const int64_t q = queries_.size(0);
  nn::parallel_for(0, (q + kTileRows - 1) / kTileRows, 1, [&](int64_t begin, int64_t end) {
    torch::Tensor buffer = torch::empty({kTileRows, std::min(kTileCols, n)}, torch::kFloat32);
    for (int64_t tile = begin; tile < end; ++tile) {
      const int64_t r0 = tile * kTileRows, rows = std::min(kTileRows, q - r0);
      for (int64_t c0 = 0; c0 < n; c0 += kTileCols) {
        const int64_t cols = std::min(kTileCols, n - c0);
        torch::Tensor scores_tile = buffer.narrow(0, 0, rows).narrow(1, 0, cols);
        at::mm_out(scores_tile, queries_.narrow(0, r0, rows), items.narrow(0, c0, cols).t());
        const float* tile_data = scores_tile.data_ptr<float>();
        const int64_t stride = scores_tile.stride(0);
        for (int64_t i = 0; i < rows; ++i) {
          const int64_t r = r0 + i;
          std::vector<Candidate>& heap = heaps_[static_cast<size_t>(r)];
          const float* row = tile_data + i * stride;
          const float* norms = xn == nullptr ? nullptr : xn + c0;
          const float q_norm = qn == nullptr ? 0.0f : qn[r];
          int64_t j = 0;
          // Fill the heap.
          for (; j < cols && heap.size() < k; ++j) {
            const float s = norms == nullptr ? row[j] : q_norm + norms[j] - 2.0f * row[j];
            heap.push_back(Candidate{s, first_index + c0 + j});
            std::push_heap(heap.begin(), heap.end(), above);
          }
          if (j == cols) continue;
          // Then only scores at least as good as the worst kept one can enter (ties decided by
          // the item index, as `below` orders them).
          float worst = heap.front().score;
          for (; j < cols; ++j) {
            const float s = norms == nullptr ? row[j] : q_norm + norms[j] - 2.0f * row[j];
            if (larger_is_better ? s < worst : s > worst) continue;
            const Candidate c{s, first_index + c0 + j};
            if (!below(heap.front(), c)) continue;
            std::pop_heap(heap.begin(), heap.end(), above);
            heap.back() = c;
            std::push_heap(heap.begin(), heap.end(), above);
            worst = heap.front().score;
          }
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
