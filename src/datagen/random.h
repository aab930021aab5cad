// Deterministic randomness of `tzrec gen_data --pipeline_config_path`: counter-based hashes
// (splitmix64 and fnv1a64 of base/stable_hash.h) and a small per-row generator, so that every
// value is a pure function of (seed, stream, index) and the output is byte-identical across
// platforms (no std:: distributions are used).
#pragma once

#include <cmath>
#include <cstdint>

#include "base/stable_hash.h"

namespace tzrec::datagen {

inline uint64_t mix(uint64_t a, uint64_t b) { return splitmix64(splitmix64(a) ^ b); }
inline uint64_t mix(uint64_t a, uint64_t b, uint64_t c) { return mix(mix(a, b), c); }
inline uint64_t mix(uint64_t a, uint64_t b, uint64_t c, uint64_t d) { return mix(mix(a, b, c), d); }

// A standard normal from one 64-bit word (Box-Muller on its two derived words).
inline double normal_from(uint64_t bits) {
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  const uint64_t b2 = splitmix64(bits);
  return std::sqrt(-2.0 * std::log(open_unit_from_bits(bits))) * std::cos(kTwoPi * open_unit_from_bits(b2));
}

// Sequential generator over one stream: word i (from 0) is splitmix64(seed + (i + 1) · kGolden64),
// i.e. the SplitMix64 sequence seeded with seed + kGolden64.
class Rng {
 public:
  explicit Rng(uint64_t seed) : stream_(seed + kGolden64) {}
  uint64_t next() { return stream_.next(); }
  double unit() { return open_unit_from_bits(next()); }
  double normal() { return normal_from(next()); }
  // Uniform integer in [lo, hi] (hi >= lo).
  int64_t uniform_int(int64_t lo, int64_t hi) {
    const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    return lo + static_cast<int64_t>(span == 0 ? next() : next() % span);
  }

 private:
  SplitMix64 stream_;
};

}  // namespace tzrec::datagen
