#include "retrieval/sid_collision.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "retrieval/sid_quality.h"

namespace tzrec::retrieval {
namespace {

constexpr uint64_t kSplitMixIncrement = 0x9E3779B97F4A7C15ULL;
constexpr uint64_t kSeed = 2026;

uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

uint64_t load_le64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// SipHash-2-4 (Aumasson and Bernstein's reference algorithm) of `data` under a 16-byte key.
uint64_t siphash24(std::string_view data, const char key[16]) {
  const uint64_t k0 = load_le64(reinterpret_cast<const unsigned char*>(key));
  const uint64_t k1 = load_le64(reinterpret_cast<const unsigned char*>(key) + 8);
  uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
  uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
  auto round = [&] {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
  };
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  const size_t n = data.size();
  const size_t whole = n - n % 8;
  for (size_t i = 0; i < whole; i += 8) {
    const uint64_t m = load_le64(p + i);
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
  uint64_t b = static_cast<uint64_t>(n) << 56;
  for (size_t i = whole; i < n; ++i) b |= static_cast<uint64_t>(p[i]) << (8 * (i - whole));
  v3 ^= b;
  round();
  round();
  v0 ^= b;
  v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) round();
  return v0 ^ v1 ^ v2 ^ v3;
}

}  // namespace

int64_t sid_bucket_key(const int64_t* codes, const std::vector<int64_t>& layer_sizes) {
  const size_t L = layer_sizes.size();
  int64_t band = 0;
  for (size_t l = 0; l + 1 < L; ++l) band = band * (l == 0 ? 1 : layer_sizes[l]) + codes[l];
  return band * layer_sizes.back() + codes[L - 1];
}

int64_t SidPriorOccupancy::count(int64_t key) const {
  const auto it = std::lower_bound(bucket_keys.begin(), bucket_keys.end(), key);
  return it != bucket_keys.end() && *it == key ? bucket_counts[static_cast<size_t>(it - bucket_keys.begin())] : 0;
}

void check_sid_collision_config(const std::vector<int64_t>& layer_sizes, int64_t capacity) {
  check_sid_codebook(layer_sizes);
  if (capacity < 1) throw UsageError(fmt::format("--max_items_per_codebook: capacity must be >= 1, got {}", capacity));
}

uint64_t sid_splitmix64(uint64_t value) { return mix64(value + kSeed * kSplitMixIncrement); }

uint64_t pandas_string_hash(std::string_view text) {
  static const char kPandasKey[16] = {'0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '1', '2', '3', '4', '5', '6'};
  return mix64(siphash24(text, kPandasKey));
}

SidCollisionPlan plan_sid_collisions(const std::vector<int64_t>& codes, const std::vector<uint64_t>& order_hashes,
                                     const std::vector<int64_t>& layer_sizes, int64_t capacity,
                                     SidPriorOccupancy prior) {
  check_sid_collision_config(layer_sizes, capacity);
  int64_t key_space = 1;
  for (int64_t s : layer_sizes) key_space *= s;
  if (!prior.bucket_keys.empty() && (prior.bucket_keys.front() < 0 || prior.bucket_keys.back() >= key_space)) {
    throw DataError(fmt::format("the published SID buckets fall outside the key space of --codebook {}; check that "
                                "--codebook matches the run that produced the published generation",
                                fmt::join(layer_sizes, ",")));
  }
  SidCollisionPlan plan;
  plan.prior = std::move(prior);
  plan.num_layers = static_cast<int64_t>(layer_sizes.size());
  plan.layer_sizes = layer_sizes;
  plan.capacity = capacity;
  const int64_t L = plan.num_layers;
  const int64_t n = static_cast<int64_t>(order_hashes.size());
  plan.band_ids.resize(static_cast<size_t>(n));
  plan.last_codes.resize(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) {
    const int64_t* c = codes.data() + r * L;
    plan.band_ids[static_cast<size_t>(r)] = sid_bucket_key(c, layer_sizes) / layer_sizes.back();
    plan.last_codes[static_cast<size_t>(r)] = c[L - 1];
  }
  // Rows in (band, last code, hash, row) order: the buckets, each ranked by hash.
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const size_t i = static_cast<size_t>(a), j = static_cast<size_t>(b);
    if (plan.band_ids[i] != plan.band_ids[j]) return plan.band_ids[i] < plan.band_ids[j];
    if (plan.last_codes[i] != plan.last_codes[j]) return plan.last_codes[i] < plan.last_codes[j];
    if (order_hashes[i] != order_hashes[j]) return order_hashes[i] < order_hashes[j];
    return a < b;
  });
  const int64_t last_size = layer_sizes.back();
  plan.slots.resize(static_cast<size_t>(n));
  for (int64_t k = 0; k < n;) {
    const size_t first = static_cast<size_t>(order[static_cast<size_t>(k)]);
    const int64_t key = plan.band_ids[first] * last_size + plan.last_codes[first];
    const int64_t published = plan.prior.count(key);
    int64_t e = k;
    while (e < n && plan.band_ids[static_cast<size_t>(order[static_cast<size_t>(e)])] == plan.band_ids[first] &&
           plan.last_codes[static_cast<size_t>(order[static_cast<size_t>(e)])] == plan.last_codes[first]) {
      const int64_t row = order[static_cast<size_t>(e)];
      const int64_t rank = published + e - k;
      plan.slots[static_cast<size_t>(row)] = rank + 1;
      if (rank >= capacity) plan.overflow_rows.push_back(row);
      ++e;
    }
    plan.bucket_keys.push_back(key);
    plan.bucket_counts.push_back(e - k);
    plan.prior_counts.push_back(published);
    k = e;
  }
  return plan;
}

std::vector<int64_t> random_candidate_last_codes(const std::vector<uint64_t>& overflow_hashes, int64_t num_candidates,
                                                 int64_t last_size, int64_t* per_row) {
  if (last_size < 2) throw UsageError("--strategy random: random candidates require a last layer of at least 2 codes");
  const int64_t k = std::min(num_candidates, last_size - 1);
  *per_row = k;
  std::vector<int64_t> out;
  out.reserve(overflow_hashes.size() * static_cast<size_t>(k));
  for (uint64_t h : overflow_hashes) {
    for (int64_t j = 0; j < k; ++j) {
      out.push_back(static_cast<int64_t>(sid_splitmix64(h + static_cast<uint64_t>(j) * kSplitMixIncrement) %
                                         static_cast<uint64_t>(last_size)));
    }
  }
  return out;
}

SidCollisionResult resolve_sid_collisions_first_fit(const SidCollisionPlan& plan, const std::vector<int64_t>& candidates,
                                                    int64_t per_row) {
  const int64_t last_size = plan.layer_sizes.back();
  const int64_t capacity = plan.capacity;
  for (int64_t c : candidates) {
    if (c < 0 || c >= last_size) {
      throw DataError(fmt::format("candidate last-layer code {} is outside [0, {}): check that --codebook matches the "
                                  "model that produced the candidates",
                                  c, last_size));
    }
  }
  SidCollisionResult result;
  result.last_codes = plan.last_codes;
  result.slots = plan.slots;
  SidCollisionStats& stats = result.stats;
  stats.total_items = plan.rows();
  for (size_t b = 0; b < plan.bucket_counts.size(); ++b) {
    const int64_t combined = plan.prior_counts[b] + plan.bucket_counts[b];
    if (combined > capacity) ++stats.raw_collision_buckets;
    if (plan.overflow_rows.empty()) stats.max_final_bucket_size = std::max(stats.max_final_bucket_size, combined);
  }
  if (plan.overflow_rows.empty()) return result;
  // Relocation reads and writes only the buckets of bands holding an overflow row.
  std::vector<int64_t> overflow_bands;
  for (int64_t row : plan.overflow_rows) overflow_bands.push_back(plan.band_ids[static_cast<size_t>(row)]);
  std::sort(overflow_bands.begin(), overflow_bands.end());
  overflow_bands.erase(std::unique(overflow_bands.begin(), overflow_bands.end()), overflow_bands.end());
  auto in_overflow_band = [&](int64_t key) {
    return std::binary_search(overflow_bands.begin(), overflow_bands.end(), key / last_size);
  };
  std::unordered_map<int64_t, int64_t> counts;  // bucket key → items, in the overflow bands
  for (size_t b = 0; b < plan.prior.bucket_keys.size(); ++b) {
    if (in_overflow_band(plan.prior.bucket_keys[b])) counts[plan.prior.bucket_keys[b]] = plan.prior.bucket_counts[b];
  }
  int64_t max_untouched = 0;
  for (size_t b = 0; b < plan.bucket_keys.size(); ++b) {
    // Capped at capacity, but never below what is published.
    const int64_t initial =
        std::max(plan.prior_counts[b], std::min(plan.prior_counts[b] + plan.bucket_counts[b], capacity));
    if (in_overflow_band(plan.bucket_keys[b])) {
      counts[plan.bucket_keys[b]] = initial;
    } else {
      max_untouched = std::max(max_untouched, initial);
    }
  }
  for (size_t i = 0; i < plan.overflow_rows.size(); ++i) {
    const size_t row = static_cast<size_t>(plan.overflow_rows[i]);
    const int64_t prefix = plan.band_ids[row] * last_size;
    const int64_t origin = plan.last_codes[row];
    bool placed = false;
    for (int64_t j = 0; j < per_row && !placed; ++j) {
      const int64_t candidate = candidates[i * static_cast<size_t>(per_row) + static_cast<size_t>(j)];
      if (candidate == origin) continue;
      int64_t& count = counts[prefix + candidate];
      if (count < capacity) {
        ++count;
        result.last_codes[row] = candidate;
        result.slots[row] = count;
        ++stats.relocated_count;
        placed = true;
      }
    }
    if (!placed) {  // no free candidate: the SID stays, over capacity
      result.unresolved_rows.push_back(static_cast<int64_t>(row));
      result.slots[row] = ++counts[prefix + origin];
    }
  }
  stats.unresolved_count = static_cast<int64_t>(result.unresolved_rows.size());
  int64_t max_band = 0;
  for (const auto& [key, count] : counts) {
    if (count > capacity) ++stats.final_collision_buckets;
    max_band = std::max(max_band, count);
  }
  stats.max_final_bucket_size = std::max(max_untouched, max_band);
  return result;
}

}  // namespace tzrec::retrieval
