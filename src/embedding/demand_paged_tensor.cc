#include "embedding/demand_paged_tensor.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <new>

#include "base/huge_pages.h"

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
  advise_huge_pages(p, length);
  return torch::from_blob(p, sizes, [length](void* q) { ::munmap(q, length); }, options);
}

void release_pages(torch::Tensor& t) {
  const size_t bytes = static_cast<size_t>(t.numel()) * t.element_size();
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  auto* data = static_cast<char*>(t.data_ptr());
  // Whole pages inside the tensor only (never past its last byte), the rest zero-filled.
  const size_t whole = t.is_contiguous() && reinterpret_cast<uintptr_t>(data) % page == 0 ? bytes / page * page : 0;
  if (whole < (size_t{1} << 20) || ::madvise(data, whole, MADV_DONTNEED) != 0) {
    t.zero_();
    return;
  }
  std::memset(data + whole, 0, bytes - whole);
}

}  // namespace tzrec::embedding
