#include "embedding/dynamic_table.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <emmintrin.h>

#include "base/error.h"

namespace tzrec::embedding {
namespace {

// Rows of one table on one rank: rounded up to whole buckets and doublings (at most 2^20 + 1/64
// more) they stay below 2^31 - 1, the row an empty slot's meta holds.
constexpr int64_t kMaxDynamicRows = int64_t{1} << 30;
constexpr int64_t kMaxDynamicBucket = int64_t{1} << 20;
constexpr uint64_t kMaxScore = std::numeric_limits<uint32_t>::max();
// TIMESTAMP scores are ms + 1 above a base that the newest time keeps 2^31 ms behind it (moved
// forward once a time would pass 2^32 - 1), so the last 2^31 ms at least keep their order.
constexpr int64_t kTimeWindow = int64_t{1} << 31;

uint32_t clamp_score(int64_t value) {
  return static_cast<uint32_t>(std::clamp<int64_t>(value, 0, static_cast<int64_t>(kMaxScore)));
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// A training call's ids are numbered in 32 bits (missing_, the per-part lists).
void check_call_size(size_t n) {
  if (n >= (size_t{1} << 31)) throw std::invalid_argument("DynamicTable::find_or_insert: more than 2^31 - 1 ids");
}

// Zero digests after the last slot's: a half of B / 2 slots that is not a multiple of 16 is scanned
// 16 digests at a time (for_each_digest_match reads past its end and ignores those).
constexpr size_t kDigestPadding = 16;

// Allocates digests for `slots` slots and zeroes the padding after them.
void allocate_digests(dynamic_hash::HugePageArray<uint8_t>& digests, size_t slots) {
  digests.allocate(slots + kDigestPadding);
  std::fill(digests.data() + slots, digests.data() + slots + kDigestPadding, uint8_t{0});
}

// Bits 0 and 1: the 64-bit lanes of a and b are equal (SSE2 compares 32 bits at a time: a lane
// is equal when both of its halves are).
inline uint32_t equal_lanes(__m128i a, __m128i b) {
  const __m128i halves = _mm_cmpeq_epi32(a, b);
  const __m128i both = _mm_and_si128(halves, _mm_shuffle_epi32(halves, _MM_SHUFFLE(2, 3, 0, 1)));
  return static_cast<uint32_t>(_mm_movemask_pd(_mm_castsi128_pd(both)));
}

}  // namespace

const char* dynamic_score_strategy_name(DynamicScoreStrategy strategy) {
  switch (strategy) {
    case DynamicScoreStrategy::kTimestamp: return "TIMESTAMP";
    case DynamicScoreStrategy::kStep: return "STEP";
    case DynamicScoreStrategy::kLfu: return "LFU";
    case DynamicScoreStrategy::kNoEviction: return "NO_EVICTION";
  }
  return "?";
}

DynamicScoreStrategy parse_dynamic_score_strategy(const std::string& name, const std::string& field_path) {
  if (name == "TIMESTAMP") return DynamicScoreStrategy::kTimestamp;
  if (name == "STEP") return DynamicScoreStrategy::kStep;
  if (name == "LFU") return DynamicScoreStrategy::kLfu;
  if (name == "NO_EVICTION") return DynamicScoreStrategy::kNoEviction;
  if (name == "CUSTOMIZED") {
    throw NotSupportedError(fmt::format(
        "{}: CUSTOMIZED (scores set through dynamicemb's set_score); use TIMESTAMP, STEP, LFU or NO_EVICTION",
        field_path));
  }
  throw ConfigError(fmt::format("{}: unknown '{}'; use TIMESTAMP, STEP, LFU or NO_EVICTION", field_path, name));
}

DynamicTableOptions DynamicTableOptions::per_rank(int world_size) const {
  if (world_size < 1) throw std::invalid_argument("DynamicTableOptions::per_rank: world_size < 1");
  // Invalid sizes stay as they are, for validate_dynamic_table_options to report.
  DynamicTableOptions shard = *this;
  if (max_capacity >= 1) {
    shard.max_capacity = static_cast<int64_t>(ceil_div(static_cast<uint64_t>(max_capacity), world_size));
  }
  const int64_t global_counter = admission ? admission->counter_capacity.value_or(max_capacity) : 0;
  if (global_counter >= 1) {
    const int64_t per_rank = std::max<int64_t>(global_counter / world_size, 1);
    const int64_t align = dynamic_hash::kBucketAlignment;
    shard.admission->counter_capacity = (per_rank + align - 1) / align * align;
  }
  return shard;
}

void validate_dynamic_table_options(const DynamicTableOptions& o) {
  const std::string& path = o.field_path;
  if (o.max_capacity < 1 || o.max_capacity > kMaxDynamicRows) {
    throw ConfigError(fmt::format("{}.max_capacity: {} is outside [1, {}] (rows of one table on one rank)", path,
                                  o.max_capacity, kMaxDynamicRows));
  }
  if (o.init_capacity && *o.init_capacity < 1) {
    throw ConfigError(fmt::format("{}.init_capacity_per_rank: {} must be at least 1", path, *o.init_capacity));
  }
  if (o.bucket_capacity < dynamic_hash::kBucketAlignment || o.bucket_capacity > kMaxDynamicBucket ||
      o.bucket_capacity % dynamic_hash::kBucketAlignment != 0) {
    throw ConfigError(fmt::format("{}.bucket_capacity: {} must be a multiple of {} (dynamicemb's bucket alignment) "
                                  "in [16, {}], e.g. 128",
                                  path, o.bucket_capacity, dynamic_hash::kBucketAlignment, kMaxDynamicBucket));
  }
  if (o.admission) {
    const std::string admission_path = path + ".frequency_admission_strategy";
    if (o.admission->threshold < 0 || static_cast<uint64_t>(o.admission->threshold) > kMaxScore) {
      throw ConfigError(fmt::format("{}.threshold: {} is outside [0, {}]", admission_path, o.admission->threshold,
                                    kMaxScore));
    }
    if (o.admission->counter_capacity && *o.admission->counter_capacity < 1) {
      throw ConfigError(fmt::format("{}.counter_capacity: {} must be at least 1", admission_path,
                                    *o.admission->counter_capacity));
    }
    if (o.admission->counter_bucket_capacity < 1 || o.admission->counter_bucket_capacity > kMaxDynamicBucket) {
      throw ConfigError(fmt::format("{}.counter_bucket_capacity: {} is outside [1, {}]", admission_path,
                                    o.admission->counter_bucket_capacity, kMaxDynamicBucket));
    }
  }
}

DynamicTable::DynamicTable(DynamicTableOptions options) : options_(std::move(options)) {
  validate_dynamic_table_options(options_);
  strategy_ = options_.score_strategy;
  bucket_capacity_ = static_cast<uint32_t>(options_.bucket_capacity);
  half_slots_ = bucket_capacity_ / 2;
  // Index buckets: one slot per row, two under NO_EVICTION (dynamicemb's fixed 0.5 load factor).
  const uint64_t per_row = strategy_ == DynamicScoreStrategy::kNoEviction ? 2 : 1;
  const uint64_t row_buckets = ceil_div(static_cast<uint64_t>(options_.max_capacity), bucket_capacity_);
  const uint64_t top = per_row * row_buckets;
  const uint64_t init_rows = static_cast<uint64_t>(options_.init_capacity.value_or(options_.max_capacity));
  const uint64_t init = std::min(top, per_row * ceil_div(init_rows, bucket_capacity_));
  // k doublings lead from the initial index to the top exactly (each splits every bucket in two, so
  // growth never overflows a bucket): the top rounds up to a multiple of 2^k, by at most 1/64.
  int k = 0;
  while ((init << (k + 1)) <= top) ++k;
  const auto round_up = [&](int doublings) { return ceil_div(top, uint64_t{1} << doublings) << doublings; };
  while (k > 0 && round_up(k) - top > top / 64) --k;
  top_buckets_ = round_up(k);
  max_rows_ = static_cast<int64_t>(per_row == 2 ? row_buckets * bucket_capacity_ : top_buckets_ * bucket_capacity_);
  initial_buckets_ = top_buckets_ >> k;
  allocate_index(initial_buckets_);
  if (options_.admission) {
    counter_ = std::make_unique<DynamicAdmissionCounter>(
        options_.admission->counter_capacity.value_or(options_.max_capacity),
        options_.admission->counter_bucket_capacity);
  }
}

DynamicTable::~DynamicTable() = default;
DynamicTable::DynamicTable(DynamicTable&&) noexcept = default;
DynamicTable& DynamicTable::operator=(DynamicTable&&) noexcept = default;

void DynamicTable::allocate_index(uint64_t num_buckets) {
  prepared_.reset();  // (stops a background allocation in progress)
  num_buckets_ = num_buckets;
  const size_t slots = num_buckets * bucket_capacity_;
  allocate_digests(digests_, slots);
  std::fill(digests_.data(), digests_.data() + slots, uint8_t{0});
  slots_.assign(slots, empty_slot());
  mark_empty_slots(slots_.data(), digests_.data(), num_buckets);
  halves_.assign(2 * num_buckets, Half{});
  victims_.reset(0);
  max_score_ = 0;
}

int64_t DynamicTable::capacity() const {
  const int64_t slots = static_cast<int64_t>(num_buckets_ * bucket_capacity_);
  return strategy_ == DynamicScoreStrategy::kNoEviction ? std::min(max_rows_, slots / 2) : slots;
}

int64_t DynamicTable::memory_bytes() const {
  const size_t prepared_slots = prepared_ ? prepared_->num_buckets * bucket_capacity_ : 0;
  int64_t bytes = static_cast<int64_t>((slots_.size() + prepared_slots) * (sizeof(uint8_t) + sizeof(Slot)) +
                                       halves_.size() * sizeof(Half) + free_rows_.capacity() * sizeof(uint32_t) +
                                       protected_.size() * sizeof(uint64_t));
  return bytes + victims_.memory_bytes() + (counter_ ? counter_->memory_bytes() : 0);
}

namespace {

// The first empty slot (digest 0) among `count` from `begin`, or `none`.
uint64_t first_empty(const uint8_t* digests, uint64_t begin, uint32_t count, uint64_t none) {
  uint64_t found = none;
  dynamic_hash::for_each_digest_match(digests + begin, count, 0, [&](uint32_t s) {
    found = begin + s;
    return true;
  });
  return found;
}

}  // namespace

void DynamicTable::place_new_key(const IndexArrays& index, uint64_t base, uint64_t h, Slot x) {
  const uint32_t half_slots = index.half_slots;
  const uint32_t home = home_half(h);
  Half* halves = index.halves_of(base);
  const uint32_t half = halves[home].size < half_slots ? home : 1 - home;
  const uint64_t half_base = base + uint64_t{half} * half_slots;
  uint64_t free = ~uint64_t{0};
  if (half == home) {
    // The line's four digests in one load (a 16-byte scan from a line's digests may cross into the
    // next cache line): the lowest zero byte, if any.
    const uint64_t line = home_line(half_base, half_slots, h);
    uint32_t d;
    std::memcpy(&d, index.digests + line, sizeof(d));
    const uint32_t zero_bytes = (d - 0x01010101u) & ~d & 0x80808080u;
    if (zero_bytes != 0) free = line + __builtin_ctz(zero_bytes) / 8;
  }
  if (free == ~uint64_t{0}) free = first_empty(index.digests, half_base, half_slots, free);
  ++halves[half].size;
  settle(index, base, h, free, false, x);
}

void DynamicTable::put_key(const IndexArrays& index, uint64_t base, Slot x, uint8_t digest, uint32_t its_half,
                           uint64_t to) {
  const bool was_displaced = (x.meta & kDisplaced) != 0;
  const bool now_displaced = its_half != index.half_of(base, to);
  index.halves_of(base)[its_half].away += static_cast<uint32_t>(now_displaced) - static_cast<uint32_t>(was_displaced);
  index.slots[to] = Slot{x.key, meta_order(x.meta) | (now_displaced ? kDisplaced : 0)};
  index.digests[to] = digest;
}

void DynamicTable::move_key(const IndexArrays& index, uint64_t base, uint64_t from, uint64_t to) {
  put_key(index, base, index.slots[from], index.digests[from], index.home_half_at(base, from), to);
}

void DynamicTable::swap_keys(const IndexArrays& index, uint64_t base, uint64_t a, uint64_t b) {
  const Slot x = index.slots[a];
  const uint8_t digest = index.digests[a];
  const uint32_t its_half = index.home_half_at(base, a);
  move_key(index, base, b, a);
  put_key(index, base, x, digest, its_half, b);
}

void DynamicTable::bring_home(int64_t key, uint64_t slot, uint32_t now) {
  if (slots_[slot].key != key) return;  // moved home by an earlier occurrence of the call
  const uint64_t h = dynamic_hash::mix64(static_cast<uint64_t>(key));
  const uint64_t line = home_line_in(h, num_buckets_);
  if (slot - line < kLineSlots) return;
  const IndexArrays index = arrays();
  const uint64_t base = dynamic_hash::bucket_of(h, num_buckets_) * bucket_capacity_;
  // The line's resident to trade places with: one living away from its own home line, else the
  // one of the smallest meta_order not looked up in this call (a line of this call's keys only
  // keeps them).
  int64_t other = -1;
  for (uint64_t s = line; s < line + kLineSlots; ++s) {
    if (index.digests[s] == 0) return;  // a line with room has all its keys (never reached)
    if (index.home_line_at(base, s) != line) {
      other = static_cast<int64_t>(s);
      break;
    }
    if (meta_score(slots_[s].meta) != now &&
        (other < 0 || meta_order(slots_[s].meta) < meta_order(slots_[other].meta))) {
      other = static_cast<int64_t>(s);
    }
  }
  if (other >= 0) swap_keys(index, base, slot, static_cast<uint64_t>(other));
}

void DynamicTable::settle(const IndexArrays& index, uint64_t base, uint64_t h, uint64_t free, bool vacated, Slot x) {
  const Slot* slots = index.slots;
  const uint8_t* digests = index.digests;
  const uint32_t half_slots = index.half_slots;
  const auto half_of = [&](uint64_t s) { return index.half_of(base, s); };
  const auto home_half_of = [&](uint64_t s) { return index.home_half_at(base, s); };
  const auto home_line_at = [&](uint64_t s) { return index.home_line_at(base, s); };
  const auto in_line = [](uint64_t s, uint64_t line) { return s >= line && s < line + kLineSlots; };
  const uint32_t home = home_half(h), free_half = half_of(free);
  const uint64_t line = home_line(base + uint64_t{home} * half_slots, half_slots, h);
  // The new key into its slot (displaced, and counted away, when that is outside its home half).
  const auto put_new_key = [&](uint64_t slot) { put_key(index, base, x, slot_digest(h), home, slot); };
  if (in_line(free, line)) {
    put_new_key(free);
    return;
  }
  // 1. A key of the home line living away from its own home line moves to `free` (best where that
  // is its home line), unless that would take it out of its home half; the new key takes its slot.
  uint64_t mover = free;
  bool mover_goes_home = false;
  for (uint64_t s = line; s < line + kLineSlots; ++s) {
    if (digests[s] == 0 || home_line_at(s) == line) continue;
    if (home_half_of(s) != free_half && free_half != home) continue;
    const bool goes_home = in_line(free, home_line_at(s));
    if (mover == free || (goes_home && !mover_goes_home)) {
      mover = s;
      mover_goes_home = goes_home;
    }
  }
  // A key whose home line holds `free` and that lives elsewhere, at a slot the new key could take
  // (not taking it out of its home half unless `free` would) or, with `other` a slot of the home
  // line, one its key could take (not out of its home half): then it goes home to `free`.
  const uint64_t free_line = base + (free - base) / kLineSlots * kLineSlots;
  const uint64_t free_line_offset = free_line - base - (free_half == 0 ? 0 : half_slots);  // in its half
  const std::pair<uint32_t, uint32_t> homed = digests_homed_at(half_slots, free_line_offset);
  const auto returning = [&](uint64_t other) {
    for (uint32_t group = 0; group < index.bucket_capacity; group += 64) {
      // (the digests first: they tell the line, the meta only the half)
      uint64_t mask = dynamic_hash::digest_range_mask(digests + base + group,
                                                      std::min<uint32_t>(index.bucket_capacity - group, 64),
                                                      homed.first, homed.second);
      for (; mask != 0; mask &= mask - 1) {
        const uint64_t s = base + group + static_cast<uint64_t>(__builtin_ctzll(mask));
        if (in_line(s, free_line) || home_line_at(s) != free_line) continue;
        if (other == free ? half_of(s) != home && free_half == home
                          : half_of(s) != half_of(other) && home_half_of(other) != half_of(s)) {
          continue;
        }
        return s;
      }
    }
    return free;
  };
  if (mover != free) {
    if (vacated && !mover_goes_home) {
      // The mover would not be at home in `free` either: a key of free's line may go home there
      // and the mover take its slot.
      const uint64_t back = returning(mover);
      if (back != free) {
        move_key(index, base, back, free);
        move_key(index, base, mover, back);
        put_new_key(mover);
        return;
      }
    }
    move_key(index, base, mover, free);
    put_new_key(mover);
    return;
  }
  // 2. The new key cannot live at home. A key whose home line holds `free` and that lives elsewhere
  // goes home to it, and the new key takes its slot — unless that slot is outside the new key's
  // home half while `free` is not; failing that, with `free` in the other half, a key displaced
  // into the home half goes home to it.
  if (vacated) mover = returning(free);
  if (vacated && mover == free && free_half != home) {
    const uint64_t begin = base + uint64_t{home} * half_slots;
    for (uint64_t s = begin; s < begin + half_slots; ++s) {
      if (digests[s] != 0 && (slots[s].meta & kDisplaced)) {
        mover = s;
        break;
      }
    }
  }
  if (mover != free) {
    move_key(index, base, mover, free);
    free = mover;
  }
  put_new_key(free);
}

void DynamicTable::mark_empty_slots(Slot* slots, const uint8_t* digests, uint64_t num_buckets) const {
  const auto line_of = [&](int64_t key) {
    return home_line_in(dynamic_hash::mix64(static_cast<uint64_t>(key)), num_buckets);
  };
  const uint64_t zero_line = line_of(0);
  int64_t spare = 1;
  while (line_of(spare) == zero_line) ++spare;
  for (uint64_t s = zero_line; s < zero_line + kLineSlots; ++s) {
    if (digests[s] == 0) slots[s] = empty_slot(spare);
  }
}

DynamicIndexStats DynamicTable::index_stats() const {
  DynamicIndexStats stats;
  for (uint64_t b = 0; b < num_buckets_; ++b) {
    for_each_entry_of(b, [&](uint64_t s) {
      const uint64_t line = home_line_in(dynamic_hash::mix64(static_cast<uint64_t>(slots_[s].key)), num_buckets_);
      ++stats.keys;
      stats.at_home_line += s >= line && s < line + kLineSlots;
      stats.displaced += (slots_[s].meta & kDisplaced) != 0;
    });
  }
  return stats;
}

template <class Fn>
void DynamicTable::for_each_entry_of(uint64_t bucket, Fn&& fn) const {
  const uint64_t begin = bucket * bucket_capacity_;
  for (uint64_t s = begin; s < begin + bucket_capacity_; ++s) {
    if (digests_[s] != 0) fn(s);
  }
}

template <class Fn>
void DynamicTable::for_each_entry(Fn&& fn) const {
  for (uint64_t b = 0; b < num_buckets_; ++b) for_each_entry_of(b, fn);
}

int64_t DynamicTable::find_in_half(int64_t key, uint64_t h, uint64_t half_base) const {
  int64_t found = -1;
  dynamic_hash::for_each_digest_match(&digests_[half_base], half_slots_, slot_digest(h), [&](uint32_t i) {
    if (slots_[half_base + i].key != key) return false;
    found = static_cast<int64_t>(half_base + i);
    return true;
  });
  return found;
}

int64_t DynamicTable::find_slot(int64_t key, uint64_t h) const {
  const uint64_t bucket = dynamic_hash::bucket_of(h, num_buckets_);
  const uint32_t home = home_half(h);
  const uint64_t base = bucket * bucket_capacity_;
  const int64_t found = find_in_half(key, h, base + uint64_t{home} * half_slots_);
  if (found >= 0 || halves_[2 * bucket + home].away == 0) return found;
  return find_in_half(key, h, base + uint64_t{1 - home} * half_slots_);
}

DynamicTable::LineMatch DynamicTable::match_line(const Slot* line, int64_t key) {
  static_assert(sizeof(Slot) == 16 && kLineSlots == 4, "a line is four 16-byte slots: key, then meta");
  const __m128i* p = reinterpret_cast<const __m128i*>(line);
  const __m128i s0 = _mm_load_si128(p), s1 = _mm_load_si128(p + 1);
  const __m128i s2 = _mm_load_si128(p + 2), s3 = _mm_load_si128(p + 3);
  const __m128i wanted = _mm_set1_epi64x(key);
  const __m128i empty = _mm_set1_epi64x(static_cast<int64_t>(kEmptyMeta));
  return LineMatch{equal_lanes(_mm_unpacklo_epi64(s0, s1), wanted) | equal_lanes(_mm_unpacklo_epi64(s2, s3), wanted) << 2,
                   equal_lanes(_mm_unpackhi_epi64(s0, s1), empty) | equal_lanes(_mm_unpackhi_epi64(s2, s3), empty) << 2};
}

// Two passes over the ids, each a pipeline of stages kDistance ids apart so that the cache misses
// of a batch overlap. The first: (1) hash, prefetch the key's home line; (2) compare its four keys
// — most keys are found here, with one cache line, and handed over at once; the others are listed.
// The second, over the listed ids: (1) prefetch the digests of the key's home half; (2) scan them,
// prefetch the first two matching slots (key and meta share a line); (3) compare their keys; (4)
// hand the slot over. Two passes rather than one pipeline with the second's stages skipped for
// found keys: each stage's branches then go one way for most ids. Empty slots have digest 0, which
// no key has (slot_digest), so the scans cover the whole half without reading its size; and a key
// that no empty slot of its home line holds (mark_empty_slots), so the first pass reads no
// digest; a key not in its home line while that has an empty slot is absent, and the second pass
// only hands it over. In a full half of 64 another key's digest matches before the key's own in
// about 12% of probes (each of the 31.5 slots before it on average matches with 1 in 256), so the
// second match is fetched in the same stage rather than by a dependent miss afterwards; only ids
// with a third match scan again. A key whose home half has no digest match is not at home: stage 2 also
// prefetches its home's away count and the other half's digests; stage 3, when that count is not
// 0, scans them and prefetches the first two matching slots there, and stage 4 compares those keys
// — so the keys displaced from full home halves (a few percent of a full table's) are pipelined
// too. on(i, slot, at_home) is called once per id: for the ids found in the first pass there (at
// home), for the others (the absent ones among them) in the second, in the order of i.
template <class OnSlot>
void DynamicTable::probe_batch(const int64_t* ids, size_t n, OnSlot&& on) const {
  constexpr size_t kDistance = 8;
  constexpr size_t kRing = 32;  // > 3 * kDistance, a power of two
  constexpr size_t kLineDistance = 32;  // the first pass: little work per id, so more of them ahead
  const uint8_t* digests = digests_.data();
  const Slot* slots = slots_.data();
  const Half* halves = halves_.data();
  const uint64_t b_cap = bucket_capacity_;
  const uint32_t half_slots = half_slots_;
  struct Listed {
    uint64_t h;
    size_t i;
    bool absent;  // its home line has an empty slot (mark_empty_slots)
  };
  static thread_local std::vector<Listed> listed;  // the second pass's ids (a thread probes one part)
  listed.clear();
  {
    struct Line {
      uint64_t h;
      uint64_t first;  // the home line's first slot
    };
    Line ring[2 * kLineDistance];
    for (size_t i = 0; i < n + kLineDistance; ++i) {
      if (i < n) {
        Line& l = ring[i % (2 * kLineDistance)];
        l.h = dynamic_hash::mix64(static_cast<uint64_t>(ids[i]));
        l.first = home_line_in(l.h, num_buckets_);
        __builtin_prefetch(slots + l.first);
      }
      if (i >= kLineDistance) {
        const size_t j = i - kLineDistance;
        const Line& l = ring[j % (2 * kLineDistance)];
        const LineMatch match = match_line(slots + l.first, ids[j]);
        if (match.keys != 0) {
          on(j, static_cast<int64_t>(l.first) + __builtin_ctz(match.keys), true);
        } else {
          listed.push_back(Listed{l.h, j, match.empty != 0});
        }
      }
    }
  }
  struct Pending {
    uint64_t h;
    uint64_t bucket;
    uint64_t home_base;    // first slot of the key's home half
    uint64_t other_base;   // first slot of the other half
    int64_t candidate[2];  // slot indices of the first two digest matches (home, then away), -1 where none
    bool more;             // a third match follows
    bool absent;           // known absent (Listed::absent)
    int64_t slot;          // stage 3's result: the key's slot, -1 when absent, kAway to compare away
  };
  constexpr int64_t kAway = -2;
  Pending ring[kRing];
  // Records the first two slots from `base` whose digests match p's (prefetching them) and whether
  // a third follows; returns the number recorded.
  const auto collect = [&](Pending& p, uint64_t base) {
    p.candidate[0] = p.candidate[1] = -1;
    p.more = false;
    int matches = 0;
    dynamic_hash::for_each_digest_match(digests + base, half_slots, slot_digest(p.h), [&](uint32_t s) {
      if (matches == 2) {
        p.more = true;
        return true;
      }
      const int64_t slot = static_cast<int64_t>(base + s);
      p.candidate[matches++] = slot;
      __builtin_prefetch(slots + slot);
      return false;
    });
    return matches;
  };
  // p's slot among its candidates, -1 when neither holds key (and no third match is pending).
  const auto compare = [&](const Pending& p, int64_t key) -> int64_t {
    if (p.candidate[0] >= 0 && slots[p.candidate[0]].key == key) return p.candidate[0];
    if (p.candidate[1] >= 0 && slots[p.candidate[1]].key == key) return p.candidate[1];
    return -1;
  };
  const size_t m = listed.size();
  for (size_t i = 0; i < m + 3 * kDistance; ++i) {
    if (i < m) {
      Pending& p = ring[i % kRing];
      p.h = listed[i].h;
      p.absent = listed[i].absent;
      p.bucket = dynamic_hash::bucket_of(p.h, num_buckets_);
      const uint64_t home = home_half(p.h);
      p.home_base = p.bucket * b_cap + home * half_slots;
      p.other_base = p.bucket * b_cap + (1 - home) * half_slots;
      if (!p.absent) {
        const uint8_t* d = digests + p.home_base;
        __builtin_prefetch(d);
        if (half_slots > 64) __builtin_prefetch(d + 64);
      }
    }
    if (i >= kDistance && i - kDistance < m) {
      Pending& p = ring[(i - kDistance) % kRing];
      if (!p.absent && collect(p, p.home_base) == 0) {
        __builtin_prefetch(halves + 2 * p.bucket + home_half(p.h));
        __builtin_prefetch(digests + p.other_base);
        if (half_slots > 64) __builtin_prefetch(digests + p.other_base + 64);
      }
    }
    if (i >= 2 * kDistance && i - 2 * kDistance < m) {
      const size_t k = i - 2 * kDistance;
      const int64_t key = ids[listed[k].i];
      Pending& p = ring[k % kRing];
      p.slot = p.absent ? -1 : compare(p, key);
      if (p.slot < 0 && !p.absent) {
        if (p.more) {
          p.slot = find_slot(key, p.h);  // digests matching with two other keys: scan again
        } else if (halves[2 * p.bucket + home_half(p.h)].away != 0) {
          collect(p, p.other_base);
          p.slot = p.more ? find_in_half(key, p.h, p.other_base) : kAway;
        }
      }
    }
    if (i >= 3 * kDistance) {
      const size_t k = i - 3 * kDistance;
      const Pending& p = ring[k % kRing];
      on(listed[k].i, p.slot == kAway ? compare(p, ids[listed[k].i]) : p.slot, false);
    }
  }
}

template <class Fn>
void DynamicTable::for_each_part(uint64_t n, uint64_t parts, Fn&& fn) {
  auto run = [&](uint64_t part) { fn(part, n * part / parts, n * (part + 1) / parts); };
  if (parts <= 1) {
    run(0);
    return;
  }
  // The threads of the OpenMP pool that torch's ops and the fused kernels use (a thread of its own
  // per call would compete with them for the cores). Serial when built without OpenMP.
  const auto count = static_cast<int64_t>(parts);
#pragma omp parallel for num_threads(count) schedule(static, 1)
  for (int64_t part = 0; part < count; ++part) run(static_cast<uint64_t>(part));
}

template <class OnSlot>
void DynamicTable::probe_parts(const int64_t* ids, size_t n, OnSlot&& on) const {
  const uint64_t parts = n >= kParallelProbeIds ? static_cast<uint64_t>(probe_threads_) : 1;
  for_each_part(n, parts, [&](uint64_t part, uint64_t lo, uint64_t hi) {
    probe_batch(ids + lo, hi - lo, [&](size_t i, int64_t slot, bool at_home) { on(part, lo + i, slot, at_home); });
  });
}

void DynamicTable::find(const int64_t* ids, size_t n, int64_t* rows_out) const {
  find(ids, n, DynamicRowsOut{rows_out, 0, -1});
}

void DynamicTable::find(const int64_t* ids, size_t n, const DynamicRowsOut& into) const {
  probe_parts(ids, n, [&](size_t, size_t i, int64_t slot, bool) {
    into.rows[i] = slot < 0 ? into.absent : into.offset + static_cast<int64_t>(meta_row(slots_[slot].meta));
  });
}

uint32_t DynamicTable::encode_time(int64_t timestamp_ms) {
  if (!has_time_base_) {
    time_base_ms_ = timestamp_ms - kTimeWindow + 1;  // the first time scores 2^31
    has_time_base_ = true;
  }
  if (timestamp_ms < time_base_ms_) return 0;
  const uint64_t offset = static_cast<uint64_t>(timestamp_ms - time_base_ms_) + 1;
  if (offset <= kMaxScore) return static_cast<uint32_t>(offset);
  // Past 2^32 - 1 ms from the base: move the base so this time scores 2^31 again; older scores
  // shift down (those before the new base tie at 0).
  const uint64_t shift = offset - kTimeWindow;
  time_base_ms_ += static_cast<int64_t>(shift);
  for_each_entry([&](uint64_t s) {
    const uint32_t score = meta_score(slots_[s].meta);
    slots_[s].meta = with_score(slots_[s].meta, score > shift ? static_cast<uint32_t>(score - shift) : 0);
  });
  return static_cast<uint32_t>(kTimeWindow);
}

int64_t DynamicTable::decode_score(uint32_t score) const {
  switch (strategy_) {
    case DynamicScoreStrategy::kTimestamp: return time_base_ms_ + static_cast<int64_t>(score) - 1;
    case DynamicScoreStrategy::kNoEviction: return 0;
    default: return score;
  }
}

// Whether `keys` keys crowd an index of `buckets` buckets: past 3/4 of the slots (NO_EVICTION: 1/2).
bool DynamicTable::crowded(int64_t keys, uint64_t buckets) const {
  const int64_t slots = static_cast<int64_t>(buckets * bucket_capacity_);
  return strategy_ == DynamicScoreStrategy::kNoEviction ? keys > slots / 2 : keys > slots / 4 * 3;
}

bool DynamicTable::grow_needed(int64_t new_keys) const {
  return num_buckets_ < top_buckets_ && crowded(live_ + new_keys, num_buckets_);
}

// Bucket b of N goes to buckets 2b and 2b + 1 of 2N (bucket_of is the hash's high bits: a range
// reduction, not a modulus), each key placed there as a new key would be (place_new_key; keys
// in the old bucket's order). So the old buckets split independently: the probe threads each split
// a contiguous range of them and write their new buckets whole (digests cleared, keys placed,
// empty slots written: one pass over the new index, no fill before it). The table changes only
// once the new index is complete (a failed allocation leaves it as it was).
void DynamicTable::double_buckets() {
  const uint64_t old_buckets = num_buckets_, new_buckets = old_buckets * 2;
  const uint64_t b_cap = bucket_capacity_;
  dynamic_hash::HugePageArray<uint8_t> digests;
  dynamic_hash::HugePageArray<Slot> slots;
  bool prepared = false;
  if (prepared_ && prepared_->num_buckets == new_buckets) {
    try {
      prepared_->stop.store(true, std::memory_order_relaxed);  // the pages not in yet fault below
      prepared_->done.get();
      digests = std::move(prepared_->digests);
      slots = std::move(prepared_->slots);
      prepared = true;
    } catch (const std::bad_alloc&) {  // the thread could not allocate them: try once more here
    }
  }
  prepared_.reset();
  if (!prepared) {
    allocate_digests(digests, new_buckets * b_cap);
    slots.allocate(new_buckets * b_cap);
  }
  std::vector<Half> halves(2 * new_buckets);
  const IndexArrays index{slots.data(), digests.data(), halves.data(), bucket_capacity_, half_slots_};
  auto split = [&](uint64_t lo, uint64_t hi) {
    for (uint64_t b = lo; b < hi; ++b) {
      std::fill(&digests[2 * b * b_cap], &digests[2 * b * b_cap] + 2 * b_cap, uint8_t{0});
      for_each_entry_of(b, [&](uint64_t s) {
        const uint64_t h = dynamic_hash::mix64(static_cast<uint64_t>(slots_[s].key));
        const uint64_t nb = dynamic_hash::bucket_of(h, new_buckets);  // 2b or 2b + 1
        place_new_key(index, nb * b_cap, h, Slot{slots_[s].key, meta_order(slots_[s].meta)});
      });
      for (uint64_t s = 2 * b * b_cap; s < 2 * (b + 1) * b_cap; ++s) {
        if (digests[s] == 0) slots[s] = empty_slot();
      }
    }
  };
  for_each_part(old_buckets, std::min<uint64_t>(static_cast<uint64_t>(probe_threads_), old_buckets),
                [&](uint64_t, uint64_t lo, uint64_t hi) { split(lo, hi); });
  mark_empty_slots(slots.data(), digests.data(), new_buckets);
  digests_ = std::move(digests);
  slots_ = std::move(slots);
  halves_ = std::move(halves);
  num_buckets_ = new_buckets;
  victims_.reset(0);
  if (prepared) ++prepared_growths_;
}

void DynamicTable::prepare_growth() {
  // Due once 1/5 more keys would make the index grow (5/6 of the way: at 5/8 of the slots, 5/12
  // under NO_EVICTION).
  if (prepared_ || num_buckets_ >= top_buckets_ || !crowded(live_ + live_ / 5, num_buckets_)) return;
  prepared_ = std::make_unique<PreparedIndex>();
  PreparedIndex* p = prepared_.get();
  p->num_buckets = num_buckets_ * 2;
  const size_t slots = p->num_buckets * bucket_capacity_;
  p->done = std::async(std::launch::async, [p, slots] {
    constexpr size_t kPage = 4096;
    allocate_digests(p->digests, slots);
    p->slots.allocate(slots);
    // One write per page pages it in; double_buckets() overwrites every element.
    for (size_t i = 0; i < slots && !p->stop.load(std::memory_order_relaxed); i += kPage) p->digests[i] = 0;
    for (size_t i = 0; i < slots && !p->stop.load(std::memory_order_relaxed); i += kPage / sizeof(Slot)) {
      p->slots[i] = Slot{};
    }
  });
}

uint32_t DynamicTable::allocate_row() {
  if (!free_rows_.empty()) {
    const uint32_t row = free_rows_.back();
    free_rows_.pop_back();
    return row;
  }
  return static_cast<uint32_t>(next_row_++);
}

template <class Fn>
void DynamicTable::for_each_call_row(Fn&& fn) const {
  for (size_t i = 0; i < call_ids_; ++i) {
    if (call_rows_.rows[i] != call_rows_.absent) fn(call_rows_.rows[i] - call_rows_.offset);
  }
}

void DynamicTable::activate_protection() {
  if (protected_.empty()) protected_.assign(ceil_div(static_cast<uint64_t>(max_rows_), 64), 0);
  const auto pin = [&](int64_t row) {
    if (row >= 0) protected_[row >> 6] |= uint64_t{1} << (row & 63);
  };
  for_each_call_row(pin);
  for (const int64_t row : distinct_rows_) pin(row);
  protecting_ = true;
}

// The slot to evict in the full bucket at `base`: the smallest meta (score, then row) among the
// keys not pinned by this call; -1 when all are. STEP and TIMESTAMP keys of this call hold its
// score `now` (keys of an earlier call with the same step or time are pinned too, which only
// narrows the choice); LFU keys are pinned by the rows bitset.
int64_t DynamicTable::victim_hint(uint64_t base, uint32_t now) const {
  const Slot* slots = slots_.data() + base;
  const uint32_t b_cap = bucket_capacity_;
  const bool by_score = strategy_ != DynamicScoreStrategy::kLfu;
  uint32_t best = b_cap;
  uint64_t best_meta = std::numeric_limits<uint64_t>::max();
  for (uint32_t i = 0; i < b_cap; ++i) {
    const uint64_t m = meta_order(slots[i].meta);
    if ((!by_score || meta_score(m) != now) && m <= best_meta) {
      best = i;
      best_meta = m;
    }
  }
  return best == b_cap ? -1 : static_cast<int64_t>(base + best);
}

int64_t DynamicTable::pick_listed_victim(uint64_t base, uint32_t now) {
  const uint64_t bucket = base / bucket_capacity_;
  if (!victims_.allocated()) victims_.reset(num_buckets_);
  for (bool scanned = false;; scanned = true) {
    while (!victims_.empty(bucket)) {
      const DynamicVictimLists::Entry entry = victims_.front(bucket);
      auto slot = static_cast<int64_t>(base + victims_.front_slot(bucket));
      victims_.pop(bucket);
      if (digests_[slot] == 0 || slots_[slot].key != entry.key) {  // moved inside its bucket
        slot = find_slot(entry.key, dynamic_hash::mix64(static_cast<uint64_t>(entry.key)));
      }
      if (slot >= 0 && meta_order(slots_[slot].meta) == entry.order) return slot;  // else looked up since
    }
    if (scanned) return -1;  // every key of the bucket holds the call's score
    victims_.start(bucket);
    for (uint32_t i = 0; i < bucket_capacity_; ++i) {
      const Slot& slot = slots_[base + i];
      if (digests_[base + i] != 0 && meta_score(slot.meta) < now) {
        victims_.offer(bucket, slot.key, meta_order(slot.meta), i);
      }
    }
  }
}

int64_t DynamicTable::listed_victim_ahead(uint64_t bucket) const {
  if (!lists_on_ || !victims_.allocated() || victims_.empty(bucket)) return -1;
  return static_cast<int64_t>(bucket * bucket_capacity_ + victims_.front_slot(bucket));
}

int64_t DynamicTable::pick_victim(uint64_t base, uint32_t now) {
  if (lists_on_) return pick_listed_victim(base, now);
  const int64_t hint = victim_hint(base, now);
  if (strategy_ != DynamicScoreStrategy::kLfu || hint < 0) return hint;
  if (!protecting_) activate_protection();
  if (!pinned(meta_row(slots_[hint].meta))) return hint;
  // The minimum is pinned: scan again, skipping pins.
  const Slot* slots = slots_.data() + base;
  const uint32_t b_cap = bucket_capacity_;
  uint32_t best = b_cap;
  uint64_t best_meta = std::numeric_limits<uint64_t>::max();
  for (uint32_t i = 0; i < b_cap; ++i) {
    const uint64_t m = meta_order(slots[i].meta);
    if (m <= best_meta && !pinned(meta_row(m))) {
      best = i;
      best_meta = m;
    }
  }
  return best == b_cap ? -1 : static_cast<int64_t>(base + best);
}

// Brings in what inserting the key of hash h will read first: its bucket's halves, both halves'
// digests and its home line, and with_slots all of the bucket's slots (the eviction scan's metas).
void DynamicTable::prefetch_bucket(uint64_t h, bool with_slots) const {
  const uint64_t bucket = dynamic_hash::bucket_of(h, num_buckets_);
  const uint64_t base = bucket * bucket_capacity_;
  const uint64_t home_base = base + uint64_t{home_half(h)} * half_slots_;
  __builtin_prefetch(&halves_[2 * bucket]);
  // The home half's digests, which the insert reads first, by a load whose value nothing waits
  // for: measured, a prefetch instruction there left the line to come in when the insert read it
  // (the fill of a table of 8M rows 1.6 times slower than with this load).
  asm volatile("" : : "r"(*static_cast<const volatile uint8_t*>(digests_.data() + home_base)));
  __builtin_prefetch(digests_.data() + base + uint64_t{1 - home_half(h)} * half_slots_);
  __builtin_prefetch(slots_.data() + home_line(home_base, half_slots_, h));
  if (with_slots) prefetch_bucket_slots(bucket);
}

void DynamicTable::prefetch_bucket_slots(uint64_t bucket) const {
  const char* begin = reinterpret_cast<const char*>(slots_.data() + bucket * bucket_capacity_);
  for (size_t offset = 0; offset < bucket_capacity_ * sizeof(Slot); offset += 64) __builtin_prefetch(begin + offset);
}

// The row of a new (admitted) key of hash h, or -1 when it is rejected.
int64_t DynamicTable::insert_new(int64_t key, uint64_t h, uint32_t score, uint32_t now, DynamicTableLookup& out) {
  const bool no_eviction = strategy_ == DynamicScoreStrategy::kNoEviction;
  for (;;) {
    if (no_eviction && live_ >= max_rows_) return -1;
    if (no_eviction && live_ >= capacity() && num_buckets_ < top_buckets_) {
      double_buckets();
      continue;
    }
    const uint64_t bucket = dynamic_hash::bucket_of(h, num_buckets_);
    const uint64_t base = bucket * bucket_capacity_;
    uint32_t row;
    if (!bucket_full(bucket)) {
      row = allocate_row();
      ++live_;
      place_new_key(arrays(), base, h, Slot{key, make_meta(score, row)});
    } else if (num_buckets_ < top_buckets_) {
      double_buckets();
      continue;
    } else if (no_eviction) {
      return -1;
    } else {
      const int64_t victim = pick_victim(base, now);
      if (victim < 0) return -1;
      const auto slot = static_cast<uint64_t>(victim);
      row = meta_row(slots_[slot].meta);
      out.evicted_keys.push_back(slots_[slot].key);
      out.evicted_rows.push_back(row);
      const IndexArrays index = arrays();
      if (slots_[slot].meta & kDisplaced) --index.halves_of(base)[index.home_half_at(base, slot)].away;
      settle(index, base, h, slot, true, Slot{key, make_meta(score, row)});
    }
    if (protecting_) protected_[row >> 6] |= uint64_t{1} << (row & 63);
    out.new_keys.push_back(key);
    out.new_rows.push_back(row);
    return row;
  }
}

DynamicTableLookup DynamicTable::find_or_insert(const int64_t* ids, size_t n, int64_t step, int64_t timestamp_ms) {
  DynamicTableLookup out;
  find_or_insert(ids, n, step, timestamp_ms, out);
  return out;
}

void DynamicTable::find_or_insert(const int64_t* ids, size_t n, int64_t step, int64_t timestamp_ms,
                                  DynamicTableLookup& out) {
  check_call_size(n);
  out.rows.resize(n);
  find_or_insert(ids, n, step, timestamp_ms, out, DynamicRowsOut{out.rows.data(), 0, -1});
}

void DynamicTable::find_or_insert(const int64_t* ids, size_t n, int64_t step, int64_t timestamp_ms,
                                  DynamicTableLookup& out, const DynamicRowsOut& into) {
  check_call_size(n);
  int64_t* const rows = into.rows;
  call_rows_ = into;
  call_ids_ = n;
  out.new_keys.clear();
  out.new_rows.clear();
  out.evicted_keys.clear();
  out.evicted_rows.clear();
  out.not_admitted = 0;
  out.rejected = 0;
  uint32_t now = 0;
  if (strategy_ == DynamicScoreStrategy::kStep) now = clamp_score(step);
  if (strategy_ == DynamicScoreStrategy::kTimestamp) now = encode_time(timestamp_ms);
  // The victim lists hold while scores only grow: a call at a score below one the table holds (an
  // earlier step or time) clears them and its evictions scan their buckets.
  lists_on_ = (strategy_ == DynamicScoreStrategy::kStep || strategy_ == DynamicScoreStrategy::kTimestamp) &&
              now >= max_score_;
  if (lists_on_) max_score_ = now;
  if (!lists_on_ && victims_.allocated()) victims_.clear();

  // 1. Keys in the table: their rows, scores updated (atomically: a key in two parts of a
  // parallel probe is updated by both threads; the result is the serial one). A STEP / TIMESTAMP
  // score that already is the call's is not written again: the hot keys of skewed batches occur
  // many times in both parts, and every store took the line from the other core's cache.
  missing_parts_.resize(static_cast<size_t>(probe_threads_));
  for (auto& part : missing_parts_) part.clear();
  away_parts_.resize(static_cast<size_t>(probe_threads_));
  for (auto& part : away_parts_) part.clear();
  const bool bring_home_repeated = strategy_ == DynamicScoreStrategy::kStep || strategy_ == DynamicScoreStrategy::kTimestamp;
  probe_parts(ids, n, [&](size_t part, size_t i, int64_t slot, bool at_home) {
    if (slot < 0) {
      rows[i] = into.absent;
      missing_parts_[part].push_back(static_cast<uint32_t>(i));
      return;
    }
    uint64_t* m = &slots_[slot].meta;
    uint64_t seen = __atomic_load_n(m, __ATOMIC_RELAXED);
    rows[i] = into.offset + meta_row(seen);
    if (!at_home && bring_home_repeated && meta_score(seen) == now) {
      away_parts_[part].push_back(AwayHit{ids[i], static_cast<uint64_t>(slot)});
    }
    if (strategy_ == DynamicScoreStrategy::kLfu) {
      while (meta_score(seen) < kMaxScore &&
             !__atomic_compare_exchange_n(m, &seen, seen + (uint64_t{1} << 32), true, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED)) {
      }
    } else if (strategy_ != DynamicScoreStrategy::kNoEviction && meta_score(seen) != now) {
      __atomic_store_n(m, with_score(seen, now), __ATOMIC_RELAXED);
    }
  });
  missing_.clear();
  for (const auto& part : missing_parts_) missing_.insert(missing_.end(), part.begin(), part.end());
  // Keys met again in this call away from their home line move into it, so that the later calls of
  // a skewed stream find their hottest keys with one compare.
  for (const auto& part : away_parts_) {
    for (const AwayHit& hit : part) bring_home(hit.key, hit.slot, now);
  }

  // 2. The distinct missing keys, in first-occurrence order, with their occurrences.
  distinct_keys_.clear();
  distinct_hashes_.clear();
  distinct_counts_.clear();
  missing_key_.resize(missing_.size());
  if (!missing_.empty()) {
    size_t map_size = 16;
    while (map_size < 2 * missing_.size()) map_size *= 2;
    dedup_.assign(map_size, -1);
    const size_t mask = map_size - 1;
    for (size_t m = 0; m < missing_.size(); ++m) {
      const int64_t key = ids[missing_[m]];
      const uint64_t h = dynamic_hash::mix64(static_cast<uint64_t>(key));
      size_t pos = h & mask;
      while (dedup_[pos] >= 0 && distinct_keys_[dedup_[pos]] != key) pos = (pos + 1) & mask;
      if (dedup_[pos] < 0) {
        dedup_[pos] = static_cast<int32_t>(distinct_keys_.size());
        distinct_keys_.push_back(key);
        distinct_hashes_.push_back(h);
        distinct_counts_.push_back(0);
      }
      missing_key_[m] = static_cast<uint32_t>(dedup_[pos]);
      ++distinct_counts_[dedup_[pos]];
    }
  }

  // 3. Admission: occurrences counted, keys reaching the threshold admitted (and forgotten by the
  // counter), the others left without a row.
  distinct_rows_.assign(distinct_keys_.size(), -1);
  admitted_keys_.clear();
  const int64_t threshold = counter_ ? options_.admission->threshold : 0;
  for (size_t u = 0; u < distinct_keys_.size(); ++u) {
    if (counter_ && counter_->add(distinct_keys_[u], distinct_counts_[u]) < threshold) {
      ++out.not_admitted;
      continue;
    }
    if (counter_) counter_->erase(distinct_keys_[u]);
    admitted_keys_.push_back(static_cast<uint32_t>(u));
  }

  // 4. Rows for the admitted keys (growing the index first when they would crowd it).
  while (grow_needed(static_cast<int64_t>(admitted_keys_.size()))) double_buckets();
  // Three stages ahead: a bucket's halves and digests and the key's home line come in kAhead keys
  // before; a full bucket's slots (the eviction scan's metas; a bucket with room needs only its
  // home line) 3/4 kAhead before, once its halves say it is full — or with the rest when every
  // bucket is; kAhead / 2 before, the likely victim is found among them (recomputed for real
  // later) so that its key comes in too.
  constexpr size_t kAhead = 8;
  const bool may_evict = num_buckets_ == top_buckets_ && strategy_ != DynamicScoreStrategy::kNoEviction;
  const auto full_bucket_ahead = [&](size_t k) -> int64_t {  // the bucket of key k when it is full, else -1
    if (!may_evict || k >= admitted_keys_.size()) return -1;
    const uint64_t bucket = dynamic_hash::bucket_of(distinct_hashes_[admitted_keys_[k]], num_buckets_);
    return bucket_full(bucket) ? static_cast<int64_t>(bucket) : -1;
  };
  // With every slot taken every bucket is full: its slots come in with the rest, kAhead before.
  const bool all_full = may_evict && live_ == static_cast<int64_t>(num_buckets_ * bucket_capacity_);
  // With victim lists, a full bucket whose list has its next victim needs only that slot's line.
  for (size_t k = 0; k < admitted_keys_.size(); ++k) {
    if (k + kAhead < admitted_keys_.size()) {
      const uint64_t h = distinct_hashes_[admitted_keys_[k + kAhead]];
      prefetch_bucket(h, all_full && listed_victim_ahead(dynamic_hash::bucket_of(h, num_buckets_)) < 0);
    }
    if (!all_full) {
      if (const int64_t bucket = full_bucket_ahead(k + kAhead * 3 / 4);
          bucket >= 0 && listed_victim_ahead(static_cast<uint64_t>(bucket)) < 0) {
        prefetch_bucket_slots(static_cast<uint64_t>(bucket));
      }
    }
    if (const int64_t victim_bucket = full_bucket_ahead(k + kAhead / 2); victim_bucket >= 0) {
      const auto bucket = static_cast<uint64_t>(victim_bucket);
      const int64_t listed = listed_victim_ahead(bucket);
      const int64_t hint = listed >= 0 ? listed : lists_on_ ? -1 : victim_hint(bucket * bucket_capacity_, now);
      if (hint >= 0) __builtin_prefetch(slots_.data() + hint);
    }
    const uint32_t u = admitted_keys_[k];
    const uint32_t score = strategy_ == DynamicScoreStrategy::kLfu ? distinct_counts_[u] : now;
    distinct_rows_[u] = insert_new(distinct_keys_[u], distinct_hashes_[u], score, now, out);
    if (distinct_rows_[u] < 0) ++out.rejected;
  }
  for (size_t m = 0; m < missing_.size(); ++m) {
    const int64_t row = distinct_rows_[missing_key_[m]];
    rows[missing_[m]] = row < 0 ? into.absent : into.offset + row;
  }

  if (protecting_) {
    for_each_call_row([&](int64_t row) { protected_[row >> 6] &= ~(uint64_t{1} << (row & 63)); });
    protecting_ = false;
  }
  prepare_growth();
  out.capacity = capacity();
  out.num_rows = next_row_;
}

DynamicTableState DynamicTable::export_state() const {
  std::vector<std::pair<int64_t, uint64_t>> entries;  // (key, meta), keys distinct
  entries.reserve(static_cast<size_t>(live_));
  for_each_entry([&](uint64_t s) { entries.emplace_back(slots_[s].key, slots_[s].meta); });
  std::sort(entries.begin(), entries.end());
  DynamicTableState state;
  state.keys.reserve(entries.size());
  state.rows.reserve(entries.size());
  state.scores.reserve(entries.size());
  for (const auto& [key, meta] : entries) {
    state.keys.push_back(key);
    state.rows.push_back(meta_row(meta));
    state.scores.push_back(decode_score(meta_score(meta)));
  }
  if (counter_) state.counter = counter_->export_state();
  return state;
}

DynamicTableLoadResult DynamicTable::load(const DynamicTableState& state, DynamicRowMode mode) {
  const std::string where = fmt::format("dynamic embedding table '{}'", options_.table_name);
  const size_t n = state.keys.size();
  if (state.rows.size() != n || state.scores.size() != n) {
    throw DataError(fmt::format("{}: the checkpoint state has {} keys, {} rows and {} scores", where, n,
                                state.rows.size(), state.scores.size()));
  }
  if (n >= (size_t{1} << 32)) throw DataError(fmt::format("{}: the checkpoint state has {} entries", where, n));
  const bool keep = mode == DynamicRowMode::kKeep;
  const bool counted = strategy_ == DynamicScoreStrategy::kStep || strategy_ == DynamicScoreStrategy::kLfu;
  std::vector<uint64_t> seen_rows(keep ? ceil_div(static_cast<uint64_t>(max_rows_), 64) : 0, 0);
  for (size_t i = 0; i < n; ++i) {
    const int64_t row = state.rows[i];
    if (row < 0 || (keep && row >= max_rows_)) {
      throw DataError(fmt::format("{}: key {} has row {}, outside the table's {} rows", where, state.keys[i], row,
                                  max_rows_));
    }
    if (keep) {
      uint64_t& word = seen_rows[row >> 6];
      if ((word >> (row & 63)) & 1) {
        throw DataError(fmt::format("{}: row {} is held by two keys (one is {})", where, row, state.keys[i]));
      }
      word |= uint64_t{1} << (row & 63);
    }
    if (counted && state.scores[i] < 0) {
      throw DataError(fmt::format("{}: key {} has score {}; {} scores are >= 0", where, state.keys[i],
                                  state.scores[i], dynamic_score_strategy_name(strategy_)));
    }
  }

  // The index for n keys: as growth would size it, doubled further while a bucket overflows below
  // the top. Entries are then grouped by bucket (a key given twice lands twice in one bucket).
  uint64_t buckets = initial_buckets_;
  while (buckets < top_buckets_ && crowded(static_cast<int64_t>(n), buckets)) buckets *= 2;
  std::vector<uint32_t> bucket_of_entry(n);
  std::vector<uint64_t> offsets;
  for (;;) {
    offsets.assign(buckets + 1, 0);
    bool overflow = false;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t b = dynamic_hash::bucket_of(dynamic_hash::mix64(static_cast<uint64_t>(state.keys[i])), buckets);
      bucket_of_entry[i] = static_cast<uint32_t>(b);
      overflow |= ++offsets[b + 1] > bucket_capacity_;
    }
    if (!overflow || buckets == top_buckets_) break;
    buckets *= 2;
  }
  for (uint64_t b = 0; b < buckets; ++b) offsets[b + 1] += offsets[b];
  std::vector<uint32_t> grouped(n);
  {
    std::vector<uint64_t> next(offsets.begin(), offsets.end() - 1);
    for (size_t i = 0; i < n; ++i) grouped[next[bucket_of_entry[i]]++] = static_cast<uint32_t>(i);
  }
  // Priority when entries compete for slots: score, then row, then key, descending (eviction
  // takes the smallest score, then the smallest row, first).
  const auto before = [&](uint32_t a, uint32_t b) {
    if (state.scores[a] != state.scores[b]) return state.scores[a] > state.scores[b];
    if (state.rows[a] != state.rows[b]) return state.rows[a] > state.rows[b];
    return state.keys[a] > state.keys[b];
  };
  for (uint64_t b = 0; b < buckets; ++b) {
    const auto begin = grouped.begin() + static_cast<int64_t>(offsets[b]);
    const auto end = grouped.begin() + static_cast<int64_t>(offsets[b + 1]);
    std::sort(begin, end, [&](uint32_t x, uint32_t y) { return state.keys[x] < state.keys[y]; });
    const auto dup = std::adjacent_find(begin, end, [&](uint32_t x, uint32_t y) { return state.keys[x] == state.keys[y]; });
    if (dup != end) throw DataError(fmt::format("{}: the checkpoint state has key {} twice", where, state.keys[*dup]));
    if (end - begin > static_cast<int64_t>(bucket_capacity_)) std::sort(begin, end, before);
  }
  // Entries that fit: a bucket's first B; under NO_EVICTION also at most max_capacity() in all.
  std::vector<uint8_t> kept(n, 0);
  size_t num_kept = 0;
  for (uint64_t b = 0; b < buckets; ++b) {
    const uint64_t end = std::min(offsets[b + 1], offsets[b] + bucket_capacity_);
    for (uint64_t k = offsets[b]; k < end; ++k) kept[grouped[k]] = 1;
    num_kept += end - offsets[b];
  }
  if (num_kept > static_cast<size_t>(max_rows_)) {
    std::vector<uint32_t> candidates;
    for (size_t i = 0; i < n; ++i) {
      if (kept[i]) candidates.push_back(static_cast<uint32_t>(i));
    }
    std::nth_element(candidates.begin(), candidates.begin() + max_rows_, candidates.end(), before);
    for (size_t k = static_cast<size_t>(max_rows_); k < candidates.size(); ++k) kept[candidates[k]] = 0;
  }
  DynamicTableLoadResult result;
  if (counter_) result.counter_dropped = counter_->load(state.counter, where);  // validates before changing

  // From here on nothing throws.
  has_time_base_ = false;
  if (strategy_ == DynamicScoreStrategy::kTimestamp && n > 0) {
    // As a table that has just seen the newest time: it scores 2^31.
    time_base_ms_ = *std::max_element(state.scores.begin(), state.scores.end()) - kTimeWindow + 1;
    has_time_base_ = true;
  }
  const auto encode = [&](int64_t score) -> uint32_t {
    switch (strategy_) {
      case DynamicScoreStrategy::kTimestamp:
        return score < time_base_ms_ ? 0 : static_cast<uint32_t>(score - time_base_ms_ + 1);
      case DynamicScoreStrategy::kNoEviction: return 0;
      default: return clamp_score(score);
    }
  };
  allocate_index(buckets);
  live_ = 0;
  free_rows_.clear();
  result.rows.assign(n, -1);
  int64_t max_row = -1;
  for (uint64_t b = 0; b < buckets; ++b) {
    for (uint64_t k = offsets[b]; k < offsets[b + 1]; ++k) {
      const uint32_t i = grouped[k];
      if (!kept[i]) {
        ++result.dropped;
        continue;
      }
      const int64_t row = keep ? state.rows[i] : live_;
      const uint64_t h = dynamic_hash::mix64(static_cast<uint64_t>(state.keys[i]));
      const uint32_t score = encode(state.scores[i]);
      max_score_ = std::max(max_score_, score);
      place_new_key(arrays(), b * bucket_capacity_, h, Slot{state.keys[i], make_meta(score, static_cast<uint32_t>(row))});
      ++live_;
      result.rows[i] = row;
      max_row = std::max(max_row, row);
    }
  }
  next_row_ = max_row + 1;
  if (keep) {
    // Rows below num_rows() that no kept entry holds are handed out first, lowest first.
    std::vector<uint64_t> used(ceil_div(static_cast<uint64_t>(next_row_), 64) + 1, 0);
    for (const int64_t row : result.rows) {
      if (row >= 0) used[row >> 6] |= uint64_t{1} << (row & 63);
    }
    for (int64_t row = next_row_ - 1; row >= 0; --row) {
      if (!((used[row >> 6] >> (row & 63)) & 1)) free_rows_.push_back(static_cast<uint32_t>(row));
    }
  }
  result.capacity = capacity();
  result.num_rows = next_row_;
  return result;
}

}  // namespace tzrec::embedding
