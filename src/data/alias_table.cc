#include "data/alias_table.h"

#include <sys/mman.h>

#include <cmath>
#include <stdexcept>

namespace tzrec::data {

void sampler_huge_pages(const void* p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (p == nullptr || bytes < 2 * kHuge) return;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (end <= begin) return;
  void* const b = reinterpret_cast<void*>(begin);
  (void)madvise(b, end - begin, MADV_HUGEPAGE);
#endif
}

AliasTable::AliasTable(const std::vector<float>& weights) : n_(weights.size()) {
  if (weights.empty()) throw std::invalid_argument("AliasTable: no weights");
  if (weights.size() >= (uint64_t{1} << 32)) throw std::invalid_argument("AliasTable: more than 2^32 - 1 weights");
  double sum = 0.0;
  for (float w : weights) {
    if (!std::isfinite(w) || w < 0.0f) throw std::invalid_argument("AliasTable: weight not finite or negative");
    sum += static_cast<double>(w);
  }
  if (!(sum > 0.0) || !std::isfinite(sum)) throw std::invalid_argument("AliasTable: weights sum to zero");

  // Vose: scaled[i] = w_i * n / sum; columns below 1 are filled up by columns above 1.
  const size_t n = weights.size();
  std::vector<double> scaled(n);
  std::vector<uint32_t> small, large;
  small.reserve(n / 2 + 1);
  large.reserve(n / 2 + 1);
  const double scale = static_cast<double>(n) / sum;
  for (size_t i = 0; i < n; ++i) {
    scaled[i] = static_cast<double>(weights[i]) * scale;
    (scaled[i] < 1.0 ? small : large).push_back(static_cast<uint32_t>(i));
  }
  reserve_huge(&entries_, n);
  entries_.resize(n);
  constexpr double kTwo32 = 4294967296.0;
  auto set_full = [&](uint32_t i) { entries_[i] = Entry{0xffffffffu, i}; };
  while (!small.empty() && !large.empty()) {
    const uint32_t s = small.back();
    small.pop_back();
    const uint32_t l = large.back();
    const double t = std::floor(scaled[s] * kTwo32 + 0.5);
    entries_[s] = Entry{static_cast<uint32_t>(t >= kTwo32 ? kTwo32 - 1 : t), l};
    scaled[l] = (scaled[l] + scaled[s]) - 1.0;
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // What is left is 1 up to rounding: those columns keep their own index.
  for (uint32_t i : large) set_full(i);
  for (uint32_t i : small) set_full(i);
}

AliasTable AliasTable::uniform(uint64_t n) {
  if (n == 0) throw std::invalid_argument("AliasTable: no items");
  AliasTable t;
  t.n_ = n;
  return t;
}

double AliasTable::probability(uint32_t i) const {
  if (n_ == 0 || i >= n_) return 0.0;
  const double column = 1.0 / static_cast<double>(n_);
  if (entries_.empty()) return column;
  constexpr double kTwo32 = 4294967296.0;
  double p = 0.0;
  for (uint64_t c = 0; c < n_; ++c) {
    const Entry& e = entries_[c];
    // A column that is its own alias yields c whatever the coin.
    if (e.alias == c) {
      if (c == i) p += column;
      continue;
    }
    const double keep = static_cast<double>(e.threshold) / kTwo32;
    if (c == i) p += column * keep;
    if (e.alias == i) p += column * (1.0 - keep);
  }
  return p;
}

}  // namespace tzrec::data
