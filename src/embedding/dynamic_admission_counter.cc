#include "embedding/dynamic_admission_counter.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "base/error.h"

namespace tzrec::embedding {

namespace {

constexpr uint64_t kMaxCounterCount = std::numeric_limits<uint32_t>::max();

uint32_t saturating_count(uint64_t total) {
  return static_cast<uint32_t>(std::min<uint64_t>(total, kMaxCounterCount));
}

}  // namespace

DynamicAdmissionCounter::DynamicAdmissionCounter(int64_t capacity, int64_t bucket_capacity) {
  if (capacity < 1 || bucket_capacity < 1 || bucket_capacity > (int64_t{1} << 30)) {
    throw std::invalid_argument("DynamicAdmissionCounter: capacity and bucket_capacity must be >= 1");
  }
  const int64_t align = dynamic_hash::kBucketAlignment;
  bucket_capacity_ = static_cast<uint32_t>((bucket_capacity + align - 1) / align * align);
  num_buckets_ = static_cast<uint64_t>((capacity + bucket_capacity_ - 1) / bucket_capacity_);
  const size_t slots = num_buckets_ * bucket_capacity_;
  digests_.assign(slots, 0);
  keys_.assign(slots, 0);
  counts_.assign(slots, 0);
  sizes_.assign(num_buckets_, 0);
}

int64_t DynamicAdmissionCounter::find_slot(int64_t key, uint64_t h) const {
  const uint64_t base = dynamic_hash::bucket_of(h, num_buckets_) * bucket_capacity_;
  const uint32_t size = sizes_[base / bucket_capacity_];
  int64_t found = -1;
  dynamic_hash::for_each_digest_match(&digests_[base], size, dynamic_hash::digest_of(h), [&](uint32_t i) {
    if (keys_[base + i] != key) return false;
    found = static_cast<int64_t>(base + i);
    return true;
  });
  return found;
}

int64_t DynamicAdmissionCounter::add(int64_t key, int64_t count) {
  const uint64_t h = dynamic_hash::mix64(static_cast<uint64_t>(key));
  const uint64_t delta = static_cast<uint64_t>(std::max<int64_t>(count, 0));
  const int64_t slot = find_slot(key, h);
  if (slot >= 0) {
    counts_[slot] = saturating_count(counts_[slot] + delta);
    return counts_[slot];
  }
  const uint64_t bucket = dynamic_hash::bucket_of(h, num_buckets_);
  const uint64_t base = bucket * bucket_capacity_;
  uint64_t target;
  if (sizes_[bucket] < bucket_capacity_) {
    target = base + sizes_[bucket]++;
    ++size_;
  } else {
    // Full: the smallest count goes, as in dynamicemb's counter table (ties: digest, then key).
    target = base;
    for (uint64_t s = base + 1; s < base + bucket_capacity_; ++s) {
      if (counts_[s] > counts_[target]) continue;
      if (counts_[s] == counts_[target] &&
          (digests_[s] > digests_[target] || (digests_[s] == digests_[target] && keys_[s] > keys_[target]))) {
        continue;
      }
      target = s;
    }
  }
  keys_[target] = key;
  digests_[target] = dynamic_hash::digest_of(h);
  counts_[target] = saturating_count(delta);
  return counts_[target];
}

void DynamicAdmissionCounter::erase(int64_t key) {
  const uint64_t h = dynamic_hash::mix64(static_cast<uint64_t>(key));
  const int64_t slot = find_slot(key, h);
  if (slot < 0) return;
  // Keep the bucket compact: its last occupied slot moves into the hole.
  const uint64_t bucket = static_cast<uint64_t>(slot) / bucket_capacity_;
  const uint64_t last = bucket * bucket_capacity_ + --sizes_[bucket];
  keys_[slot] = keys_[last];
  digests_[slot] = digests_[last];
  counts_[slot] = counts_[last];
  --size_;
}

int64_t DynamicAdmissionCounter::count(int64_t key) const {
  const int64_t slot = find_slot(key, dynamic_hash::mix64(static_cast<uint64_t>(key)));
  return slot < 0 ? 0 : counts_[slot];
}

int64_t DynamicAdmissionCounter::memory_bytes() const {
  return static_cast<int64_t>(digests_.size() * (sizeof(uint8_t) + sizeof(int64_t) + sizeof(uint32_t)) +
                              sizes_.size() * sizeof(uint32_t));
}

DynamicCounterState DynamicAdmissionCounter::export_state() const {
  std::vector<std::pair<int64_t, uint32_t>> entries;
  entries.reserve(static_cast<size_t>(size_));
  for (uint64_t b = 0; b < num_buckets_; ++b) {
    const uint64_t base = b * bucket_capacity_;
    for (uint64_t s = base; s < base + sizes_[b]; ++s) entries.emplace_back(keys_[s], counts_[s]);
  }
  std::sort(entries.begin(), entries.end());
  DynamicCounterState state;
  state.keys.reserve(entries.size());
  state.counts.reserve(entries.size());
  for (const auto& [key, count] : entries) {
    state.keys.push_back(key);
    state.counts.push_back(count);
  }
  return state;
}

void DynamicAdmissionCounter::clear() {
  std::fill(sizes_.begin(), sizes_.end(), 0);
  size_ = 0;
}

int64_t DynamicAdmissionCounter::load(const DynamicCounterState& state, const std::string& where) {
  const size_t n = state.keys.size();
  if (state.counts.size() != n) {
    throw DataError(fmt::format("{}: the admission counter state has {} keys but {} counts", where, n,
                                state.counts.size()));
  }
  std::unordered_set<int64_t> seen;
  seen.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (!seen.insert(state.keys[i]).second) {
      throw DataError(fmt::format("{}: the admission counter state has key {} twice", where, state.keys[i]));
    }
    if (state.counts[i] < 1) {
      throw DataError(fmt::format("{}: the admission counter state has count {} for key {}; counts are >= 1",
                                  where, state.counts[i], state.keys[i]));
    }
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (state.counts[a] != state.counts[b]) return state.counts[a] > state.counts[b];
    // Eviction takes the smallest (digest, key) of a tie first: it goes in last.
    const uint8_t da = dynamic_hash::digest_of(dynamic_hash::mix64(static_cast<uint64_t>(state.keys[a])));
    const uint8_t db = dynamic_hash::digest_of(dynamic_hash::mix64(static_cast<uint64_t>(state.keys[b])));
    if (da != db) return da > db;
    return state.keys[a] > state.keys[b];
  });
  clear();
  int64_t dropped = 0;
  for (const size_t i : order) {
    const uint64_t h = dynamic_hash::mix64(static_cast<uint64_t>(state.keys[i]));
    const uint64_t bucket = dynamic_hash::bucket_of(h, num_buckets_);
    if (sizes_[bucket] == bucket_capacity_) {
      ++dropped;
      continue;
    }
    const uint64_t slot = bucket * bucket_capacity_ + sizes_[bucket]++;
    keys_[slot] = state.keys[i];
    digests_[slot] = dynamic_hash::digest_of(h);
    counts_[slot] = saturating_count(static_cast<uint64_t>(state.counts[i]));
    ++size_;
  }
  return dropped;
}

}  // namespace tzrec::embedding
