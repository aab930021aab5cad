// Where a table's rows live: the weight of an embedding table and its per-row sparse optimizer
// state. Ordinary tables get uninitialised memory backed by transparent huge pages (faster random
// row access by the fused kernels), which their owner initialises; tables whose rows are taken
// on demand (TableConfig::rows_on_demand: dynamic tables, docs/tzrec-compatibility.md §5.13) get
// zeros in demand-paged memory, so rows no id ever held take none.
#pragma once

#include <cstdint>

#include <torch/torch.h>

namespace tzrec::embedding {

// An uninitialised [rows, dim] table weight (float32 or float16) backed by transparent huge pages
// where the OS allows: allocate tables with this, then initialise them (init_table_weight).
torch::Tensor empty_embedding_weight(int64_t rows, int64_t dim, torch::ScalarType dtype);

// Rows of a table ([rows, dim] weights or state, [rows] per-row state): with `rows_on_demand`
// zeros in demand-paged memory (demand_paged_zeros), else uninitialised huge-page memory that the
// caller initialises.
torch::Tensor table_rows(at::IntArrayRef sizes, torch::ScalarType dtype, bool rows_on_demand);

}  // namespace tzrec::embedding
