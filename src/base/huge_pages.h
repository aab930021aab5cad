// Transparent huge pages for large, randomly accessed arrays (embedding tables, hash indexes).
#pragma once

#include <cstddef>

namespace tzrec {

// Asks Linux to back the whole 2 MiB pages inside [p, p + bytes) with transparent huge pages
// (madvise MADV_HUGEPAGE; a no-op elsewhere and below 4 MiB). Call before the memory is first
// written: random accesses into arrays of many MiB otherwise miss the TLB almost every time.
// Advisory only: without huge pages the memory works the same, slower.
void advise_huge_pages(void* p, size_t bytes);

}  // namespace tzrec
