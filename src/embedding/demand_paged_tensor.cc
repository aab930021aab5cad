#include "embedding/demand_paged_tensor.h"

#include <sys/mman.h>

#include <new>

#include "embedding/tbe_kernels.h"

namespace tzrec::embedding {

torch::Tensor demand_paged_zeros(at::IntArrayRef sizes, torch::ScalarType dtype) {
  const auto options = torch::TensorOptions().dtype(dtype);
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  const int64_t bytes = numel * static_cast<int64_t>(c10::elementSize(dtype));
  if (bytes < (int64_t{1} << 20)) return torch::zeros(sizes, options);
  const size_t length = static_cast<size_t>(bytes);
  void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  tbe::advise_huge_pages(p, bytes);
  return torch::from_blob(p, sizes, [length](void* q) { ::munmap(q, length); }, options);
}

}  // namespace tzrec::embedding
