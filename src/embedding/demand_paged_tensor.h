// Tensors whose memory the OS backs page by page, as each page is first written: the weights,
// sparse optimizer state and state buffers of dynamic embedding tables, which are sized for the
// table's maximum capacity but use only the rows their ids hold (docs/tzrec-compatibility.md
// §5.13). Reading a page never written reads zeros and backs nothing.
#pragma once

#include <cstdint>

#include <torch/torch.h>

namespace tzrec::embedding {

// A zero-filled contiguous CPU tensor of `sizes` and `dtype` in an anonymous private mapping of
// its own (transparent huge pages advised where the OS allows), unmapped when its storage is
// freed. Tensors under 1 MiB are ordinary zero-filled tensors. std::bad_alloc when the address
// space cannot be mapped.
torch::Tensor demand_paged_zeros(at::IntArrayRef sizes, torch::ScalarType dtype);

// Sets every element of `t` (contiguous) to zero. The whole pages of a demand-paged tensor (or
// of any private anonymous memory of at least 1 MiB) go back to the OS (MADV_DONTNEED: they read
// zeros and take no memory until written again); the rest is zero-filled.
void release_pages(torch::Tensor& t);

}  // namespace tzrec::embedding
