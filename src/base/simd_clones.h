// TZREC_SIMD_CLONES: marks a hot loop to be compiled for AVX-512 (x86-64-v4), AVX2 + FMA + F16C
// (x86-64-v3) and baseline x86-64; the loader picks the best one the CPU supports. Elsewhere it
// is empty.
#pragma once

#if defined(__x86_64__)
#define TZREC_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TZREC_SIMD_CLONES
#endif
