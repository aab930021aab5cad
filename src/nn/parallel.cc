#include "nn/parallel.h"

#include <algorithm>

#include <ATen/Parallel.h>
#include <ATen/ThreadLocalState.h>

namespace tzrec::nn {

void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  const at::ThreadLocalState state;
  at::parallel_for(begin, end, grain, [&](int64_t b, int64_t e) {
    at::ThreadLocalStateGuard guard(state);
    fn(b, e);
  });
}

void parallel_chunks(int64_t chunks, const std::function<void(int64_t chunk, int64_t slot)>& fn) {
  if (chunks <= 0) return;
  const int64_t threads = std::min<int64_t>(std::max(at::get_num_threads(), 1), chunks);
  // One task per thread (grain 1).
  parallel_for(0, threads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t slot = begin; slot < end; ++slot) {
      for (int64_t c = slot; c < chunks; c += threads) fn(c, slot);
    }
  });
}

}  // namespace tzrec::nn
