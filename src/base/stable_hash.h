// Hashes with values fixed by this file — the same on every machine, compiler and release
// (std::hash is not): seeds of random streams, keys of generated data and of dynamic tables'
// buckets depend on them, so changing one changes what runs draw and what files hold.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace tzrec {

// 2^64 / golden ratio: splitmix64's increment.
constexpr uint64_t kGolden64 = 0x9e3779b97f4a7c15ULL;

// splitmix64's finaliser: a bijective mix where every input bit affects every output bit.
inline uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// splitmix64 of one word: mix64(x + kGolden64).
inline uint64_t splitmix64(uint64_t x) { return mix64(x + kGolden64); }

// The splitmix64 sequence seeded with s: word i (from 0) is splitmix64(s + i · kGolden64). Cheap to
// create: the engine's random streams (samplers, clustering, metric sampling) make one per call.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    state_ += kGolden64;
    return mix64(state_);
  }

 private:
  uint64_t state_;
};

// splitmix64 folded over words: h = seed, then h = splitmix64(h ^ w) for each word in order. The
// seeds of per-batch random streams (a tag naming the stream, then rank, worker, batch, ...).
inline uint64_t chain_seed(uint64_t seed, std::initializer_list<uint64_t> words) {
  uint64_t h = seed;
  for (uint64_t w : words) h = splitmix64(h ^ w);
  return h;
}

// A double in [0, 1) from the top 53 bits of a random word (every value a multiple of 2^-53).
inline double unit_from_bits(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// The same in the open interval (0, 1), for logarithms and inverse CDFs: the midpoint of the 2^-53
// step (exact below 1/2; above, the sum rounds to an even multiple of 2^-53), and for the top
// value, which would round to 1, the largest double below 1. gen_data's values are drawn through
// it: changing it changes generated files.
inline double open_unit_from_bits(uint64_t bits) {
  const double u = (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53;
  return u < 1.0 ? u : 1.0 - 0x1.0p-53;
}

// FNV-1a (64 bits) of a string.
inline uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace tzrec
