// Heap settings for training processes. A training step allocates and frees the same large
// tensors (pooled embeddings, activations, gradients: megabytes each) every step. With glibc's
// defaults, blocks that large are mmap'ed and unmapped each time, or trimmed back to the kernel
// when freed, so every step pays page faults and zero-filling to touch them again (measured: the
// pooled output of a 4096 × 1664 lookup took 27 ms instead of 20 ms per step). Keeping freed
// memory in the heap lets the next step reuse it; the resident size then stays at the step's
// high-water mark, which a training process reaches anyway.
#pragma once

namespace tzrec {

// Raises glibc's mmap threshold to its maximum (32 MiB on 64-bit) and the trim threshold to
// 1 GiB. Call once at start-up, before threads are created. No-op on other C libraries, and when
// the user set MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ (their choice wins).
void tune_malloc_for_training();

// Under BF16 autocast a step also holds bf16 copies of its activations next to the fp32 ones, and
// the 8–32 MiB buffers of both sizes fragment the heap: with tune_malloc_for_training's threshold
// the MultiTowerDIN benchmark's peak RSS grew by 0.3 GiB over fp32's, past its memory budget
// (bench/README.md). Lowers the mmap threshold to 8 MiB (those buffers are then mapped and returned
// each step: 0.95 GiB instead of 1.22, for ~16% of the BF16 step time). Same no-op rules as above.
void tune_malloc_for_bf16_autocast();

}  // namespace tzrec
