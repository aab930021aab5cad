#include "embedding/table_memory.h"

#include "base/huge_pages.h"
#include "embedding/demand_paged_tensor.h"

namespace tzrec::embedding {

namespace {

torch::Tensor empty_huge_paged(at::IntArrayRef sizes, torch::ScalarType dtype) {
  torch::Tensor t = torch::empty(sizes, torch::TensorOptions().dtype(dtype));
  advise_huge_pages(t.data_ptr(), static_cast<size_t>(t.numel()) * t.element_size());
  return t;
}

}  // namespace

torch::Tensor empty_embedding_weight(int64_t rows, int64_t dim, torch::ScalarType dtype) {
  return empty_huge_paged({rows, dim}, dtype);
}

torch::Tensor table_rows(at::IntArrayRef sizes, torch::ScalarType dtype, bool rows_on_demand) {
  return rows_on_demand ? demand_paged_zeros(sizes, dtype) : empty_huge_paged(sizes, dtype);
}

}  // namespace tzrec::embedding
