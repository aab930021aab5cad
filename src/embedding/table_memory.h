// Where a table's rows live: the weight of an embedding table and its per-row sparse optimizer
// state. Ordinary tables get uninitialised memory backed by transparent huge pages (faster random
// row access by the fused kernels), which their owner initialises; tables whose rows are taken
// on demand (TableConfig::rows_on_demand: dynamic tables, docs/tzrec-compatibility.md §5.13) get
// zeros in demand-paged memory, so rows no id ever held take none.
#pragma once

#include <torch/torch.h>

namespace tzrec::embedding {

// Rows of a table ([rows, dim] weights or state, [rows] per-row state): with `rows_on_demand`
// zeros in demand-paged memory (demand_paged_zeros), else uninitialised huge-page memory that the
// caller initialises.
torch::Tensor table_rows(at::IntArrayRef sizes, torch::ScalarType dtype, bool rows_on_demand);

}  // namespace tzrec::embedding
