// Parallel loops over torch's intra-op (OpenMP) threads for code that calls torch ops inside the
// loop body. at::parallel_for does not carry the caller's thread-local state to the pool's
// threads: there grad mode is on (an out= op on a tensor that requires grad throws) and autocast
// is off; these helpers run every part under the caller's state.
#pragma once

#include <cstdint>
#include <functional>

namespace tzrec::nn {

// at::parallel_for(begin, end, grain, fn) with the caller's thread-local state (grad mode,
// autocast, ...) on every thread. Runs inline inside a parallel region.
void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// Runs fn(chunk, slot) for every chunk in [0, chunks) inside one parallel region (as
// parallel_for), slot < at::get_num_threads() naming the thread (for per-thread buffers and
// partial sums): slot s runs chunks s, s + threads, s + 2 threads, ... in this order, so per-slot
// partial sums are the same from run to run (for a given thread count). Inside fn, ATen ops and
// the BLAS run single-threaded (OpenBLAS's and oneDNN's OpenMP builds take one thread inside a
// parallel region): one fork and join for all chunks, instead of one per op of every chunk. Used
// by the row-block paths of the fused layers (nn/linear_relu.cc, nn/din_encoder.cc).
void parallel_chunks(int64_t chunks, const std::function<void(int64_t chunk, int64_t slot)>& fn);

}  // namespace tzrec::nn
