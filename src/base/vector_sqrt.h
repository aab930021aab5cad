// Square roots of a float array in place, 4 at a time where SSE is there. The compiler does not
// vectorise std::sqrt without -fno-math-errno, so the vectorised update loops (fused embedding
// optimizers, dense Adam) take their roots in a pass of their own over a small block buffer.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tzrec {

// x[i] = sqrt(x[i]) for i < n; the x are >= 0.
inline void sqrt_inplace(int64_t n, float* x) {
  int64_t i = 0;
#if defined(__x86_64__)
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(x + i, _mm_sqrt_ps(_mm_loadu_ps(x + i)));
#endif
  for (; i < n; ++i) x[i] = std::sqrt(x[i]);
}

}  // namespace tzrec
