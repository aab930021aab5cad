#include "embedding/table_memory.h"

#include "base/huge_pages.h"
#include "embedding/demand_paged_tensor.h"

namespace tzrec::embedding {

torch::Tensor table_rows(at::IntArrayRef sizes, torch::ScalarType dtype, bool rows_on_demand) {
  if (rows_on_demand) return demand_paged_zeros(sizes, dtype);
  torch::Tensor t = torch::empty(sizes, torch::TensorOptions().dtype(dtype));
  advise_huge_pages(t.data_ptr(), static_cast<size_t>(t.numel()) * t.element_size());
  return t;
}

}  // namespace tzrec::embedding
