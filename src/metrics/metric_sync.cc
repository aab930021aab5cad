#include "metrics/metric_sync.h"

#include <cstring>

namespace tzrec::metrics::detail {

namespace {

template <typename T>
void sum_vector(dist::ProcessGroup& pg, std::vector<T>& values, torch::ScalarType dtype, const std::string& what) {
  if (pg.world_size() == 1 || values.empty()) return;
  torch::Tensor t = torch::tensor(values, dtype);  // copies
  pg.all_reduce(t, dist::ReduceOp::kSum, what);
  const T* p = t.data_ptr<T>();
  values.assign(p, p + values.size());
}

}  // namespace

void sum_across_ranks(dist::ProcessGroup& pg, std::vector<double>& values, const std::string& what) {
  sum_vector(pg, values, torch::kFloat64, what);
}

void sum_across_ranks(dist::ProcessGroup& pg, std::vector<int64_t>& values, const std::string& what) {
  sum_vector(pg, values, torch::kInt64, what);
}

std::vector<torch::Tensor> gather_blocks(dist::ProcessGroup& pg, const torch::Tensor& header,
                                         const torch::Tensor& rows, const std::string& what) {
  TORCH_CHECK(header.dim() == 2 && header.size(0) == 1 && rows.dim() == 2 && rows.size(1) == header.size(1) &&
                  rows.scalar_type() == header.scalar_type(),
              "gather_blocks(", what, "): header ", header.sizes(), " and rows ", rows.sizes(), " do not fit");
  // The header row keeps every block non-empty, so the exchange never has zero-sized buffers.
  return pg.all_gather(torch::cat({header, rows}, 0).contiguous(), what);
}

void gather_grouped_samples(dist::ProcessGroup& pg, GroupedSamples& samples, const std::string& what) {
  const int64_t n = static_cast<int64_t>(samples.preds.size());
  TORCH_CHECK(static_cast<int64_t>(samples.groups.size()) == n && static_cast<int64_t>(samples.payload.size()) == n,
              "gather_grouped_samples(", what, "): columns of different lengths");
  torch::Tensor rows = torch::empty({n, 3}, torch::kInt64);
  int64_t* r = rows.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, &samples.preds[i], sizeof(bits));
    r[3 * i] = samples.groups[i];
    r[3 * i + 1] = bits;
    r[3 * i + 2] = samples.payload[i];
  }
  const std::vector<torch::Tensor> blocks = gather_blocks(pg, torch::zeros({1, 3}, torch::kInt64), rows, what);
  samples = GroupedSamples();
  for (const torch::Tensor& b : blocks) {
    const torch::Tensor block = b.contiguous();
    const int64_t* d = block.data_ptr<int64_t>();
    for (int64_t i = 1; i < block.size(0); ++i) {  // row 0: the header
      const auto bits = static_cast<uint32_t>(d[3 * i + 1]);
      float pred = 0.0F;
      std::memcpy(&pred, &bits, sizeof(pred));
      samples.groups.push_back(d[3 * i]);
      samples.preds.push_back(pred);
      samples.payload.push_back(d[3 * i + 2]);
    }
  }
}

}  // namespace tzrec::metrics::detail
