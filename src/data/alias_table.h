// Walker's alias method (Vose's construction) for drawing indices in proportion to weights in
// O(1) per draw, and the small counter-based generator the negative samplers draw from (no torch).
//
// One draw uses one 64-bit random word r: the column is floor(r * n / 2^64) (the high word of a
// 128-bit product, so the column choice has a bias below n / 2^64) and the coin is the top 32
// bits of the product's low word (the position inside the column), compared with the column's
// 32-bit threshold. A column whose own probability is 1 has itself as alias, so the coin does not
// matter there. Probabilities are exact up to the 2^-32 resolution of the thresholds.
//
// Unlike graphlearn's AliasMethod (float arithmetic, a uniform over [0, n - 1) that never picks
// the last column directly, std::random_device seeding), draws here are exact and reproducible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/stable_hash.h"

namespace tzrec::data {

// The samplers' random stream: base/stable_hash.h's SplitMix64, one per sampled batch, seeded
// from (seed, train / eval, rank, worker, batch position).
using SamplerRng = SplitMix64;

// Asks the kernel to back the whole 2 MiB pages inside [p, p + bytes) with transparent huge
// pages (MADV_HUGEPAGE) when they are first touched: random reads of tables of hundreds of MB
// otherwise miss the TLB on nearly every access. Advisory: ignored where unsupported.
void sampler_huge_pages(const void* p, size_t bytes);

// v->reserve(n), the new (untouched) storage advised for huge pages; fill it afterwards.
template <typename V>
void reserve_huge(V* v, size_t n) {
  v->reserve(n);
  sampler_huge_pages(v->data(), v->capacity() * sizeof(*v->data()));
}

// floor(r * n / 2^64): a uniform index in [0, n) from a uniform 64-bit word.
inline uint64_t sampler_uniform_index(uint64_t r, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(r) * n) >> 64);
}

class AliasTable {
 public:
  // One column per weight. Weights must be finite and >= 0 with a positive sum (the callers
  // validate and report; here a violation throws std::invalid_argument). At most 2^32 - 1 weights.
  explicit AliasTable(const std::vector<float>& weights);
  // Uniform over n indices (no table is stored; draws are one multiply).
  static AliasTable uniform(uint64_t n);
  AliasTable() = default;

  uint64_t size() const { return n_; }
  bool is_uniform() const { return entries_.empty(); }

  // The index for one random word.
  uint32_t draw(uint64_t r) const {
    const unsigned __int128 p = static_cast<unsigned __int128>(r) * n_;
    const uint32_t column = static_cast<uint32_t>(p >> 64);
    if (entries_.empty()) return column;
    const Entry& e = entries_[column];
    const uint32_t coin = static_cast<uint32_t>(static_cast<uint64_t>(p) >> 32);
    return coin < e.threshold ? column : e.alias;
  }
  // The column a word lands in (for prefetching its entry before draw()).
  const void* entry_address(uint64_t r) const {
    if (entries_.empty()) return nullptr;
    return &entries_[sampler_uniform_index(r, n_)];
  }

  // The probability the table gives index i (sum over the columns that can yield i), for tests.
  double probability(uint32_t i) const;

 private:
  struct Entry {
    uint32_t threshold = 0;  // the column keeps its own index when coin < threshold
    uint32_t alias = 0;      // else this index
  };
  uint64_t n_ = 0;
  std::vector<Entry> entries_;
};

}  // namespace tzrec::data
