#include "metrics/metric_sync.h"

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

}  // namespace tzrec::metrics::detail
