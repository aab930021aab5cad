// DynamicAdmissionCounter: the frequency counter of a dynamic embedding table's admission strategy
// — dynamicemb's KVCounter as TorchEasyRec builds it from DynamicEmbFrequencyAdmissionStrategy
// (counter_capacity, counter_bucket_capacity). docs/tzrec-compatibility.md §5.13.
//
// A bounded map raw id → count (int64 key, uint32 count saturating at 2^32 - 1) in buckets of
// bucket_capacity slots; a key lives in the bucket its hash selects. add() accumulates: a key not
// present takes a free slot of its bucket, or, when the bucket is full, the slot of the bucket's
// smallest count, whose key is forgotten — dynamicemb's counter table evicts the same way and, as
// there, keys added in the same batch are not protected from each other. Ties go to the smaller
// digest (the low byte of the key's hash, already read to look the key up), then the smaller key:
// deterministic, so a counter restored from a checkpoint evicts as the original. erase() forgets a key (DynamicTable erases admitted keys). Plain C++, no torch; not
// thread-safe.
//
// Also the hashing and bucket-scan primitives shared with dynamic_table.h (namespace
// dynamic_hash): both tables keep each bucket's slots compact — slots [0, size) of a bucket are
// occupied, so no key value is reserved as "empty" — with a one-byte digest per slot scanned 16 at
// a time before any key is compared.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/huge_pages.h"
#include "base/stable_hash.h"

namespace tzrec::embedding {
namespace dynamic_hash {

// Bucket capacities are multiples of this (dynamicemb's BUCKET_ALIGNMENT): one SSE2 compare scans
// the digests of 16 slots.
constexpr int64_t kBucketAlignment = 16;

// Buckets and digests come from mix64 (base/stable_hash.h) of the raw id: every input bit affects
// every output bit, so patterned raw ids (multiples of a stride, small ranges) spread evenly.
using tzrec::mix64;

// The bucket of hash h among num_buckets: floor(h * num_buckets / 2^64), from the high bits.
// Doubling num_buckets sends bucket b's keys to 2b and 2b + 1 only, so a bucket split never
// overflows.
inline uint64_t bucket_of(uint64_t h, uint64_t num_buckets) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(h) * num_buckets) >> 64);
}

// The slot digest: the low byte, independent of the high bits that choose the bucket.
inline uint8_t digest_of(uint64_t h) { return static_cast<uint8_t>(h); }

// Bit i set where digests[i] == digest, for i in [0, size), size in [1, 64]: the digests are read
// 16 at a time (up to 15 past `size`, ignored) and their compares merged into one mask, so a scan
// of a 64-slot bucket half takes no branch per group of 16.
inline uint64_t digest_match_mask(const uint8_t* digests, uint32_t size, uint8_t digest) {
  uint64_t mask = 0;
#if defined(__SSE2__)
  const __m128i wanted = _mm_set1_epi8(static_cast<char>(digest));
  for (uint32_t group = 0; group < size; group += 16) {
    const __m128i got = _mm_loadu_si128(reinterpret_cast<const __m128i*>(digests + group));
    mask |= uint64_t{static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(got, wanted)))} << group;
  }
#else
  for (uint32_t i = 0; i < size; ++i) mask |= uint64_t{digests[i] == digest} << i;
#endif
  return size >= 64 ? mask : mask & ((uint64_t{1} << size) - 1);
}

// Bit i set where lo <= digests[i] < hi, for i in [0, size), size in [1, 64], 1 <= lo and hi <= 256
// (digest 0, an empty slot, never matches); read as digest_match_mask reads.
inline uint64_t digest_range_mask(const uint8_t* digests, uint32_t size, uint32_t lo, uint32_t hi) {
  if (lo >= hi) return 0;
  uint64_t mask = 0;
#if defined(__SSE2__)
  // d in [lo, hi) <=> (d - lo) mod 256 <= hi - lo - 1, as unsigned bytes.
  const __m128i low = _mm_set1_epi8(static_cast<char>(lo));
  const __m128i top = _mm_set1_epi8(static_cast<char>(hi - lo - 1));
  for (uint32_t group = 0; group < size; group += 16) {
    const __m128i got = _mm_sub_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(digests + group)), low);
    const __m128i in = _mm_cmpeq_epi8(_mm_min_epu8(got, top), got);
    mask |= uint64_t{static_cast<uint32_t>(_mm_movemask_epi8(in))} << group;
  }
#else
  for (uint32_t i = 0; i < size; ++i) mask |= uint64_t{digests[i] >= lo && digests[i] < hi} << i;
#endif
  return size >= 64 ? mask : mask & ((uint64_t{1} << size) - 1);
}

// Calls visit(i) for each slot i in [0, size) with digests[i] == digest, in increasing order,
// until visit returns true; returns whether one did. `digests` points at a bucket's first digest
// and the bucket's capacity is a multiple of kBucketAlignment (digests past `size` are read but
// ignored).
template <class Visit>
inline bool for_each_digest_match(const uint8_t* digests, uint32_t size, uint8_t digest, Visit&& visit) {
  for (uint32_t group = 0; group < size; group += 64) {
    uint64_t mask = digest_match_mask(digests + group, std::min<uint32_t>(size - group, 64), digest);
    while (mask != 0) {
      if (visit(group + static_cast<uint32_t>(__builtin_ctzll(mask)))) return true;
      mask &= mask - 1;
    }
  }
  return false;
}

// A fixed-size array of trivially copyable T for the index arrays: large ones aligned to 2 MiB
// and advised to huge pages before they are first written.
template <class T>
class HugePageArray {
 public:
  HugePageArray() = default;
  // Replaces the contents with n copies of value.
  void assign(size_t n, const T& value) {
    allocate(n);
    std::fill(data_.get(), data_.get() + n, value);
  }
  // Replaces the contents with n elements left unwritten (the caller writes every one of them).
  void allocate(size_t n) {
    data_.reset();
    size_ = n;
    if (n == 0) return;
    constexpr size_t kHuge = size_t{2} << 20;
    const size_t bytes = n * sizeof(T);
    void* p = bytes >= 2 * kHuge ? std::aligned_alloc(kHuge, (bytes + kHuge - 1) / kHuge * kHuge)
                                 : std::malloc(bytes);
    if (p == nullptr) throw std::bad_alloc();
    if (bytes >= 2 * kHuge) advise_huge_pages(p, bytes);
    data_.reset(static_cast<T*>(p));
  }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  size_t size() const { return size_; }
  T& operator[](size_t i) { return data_.get()[i]; }
  const T& operator[](size_t i) const { return data_.get()[i]; }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  size_t size_ = 0;
};

}  // namespace dynamic_hash

// The counter's entries, as checkpoints store them.
struct DynamicCounterState {
  std::vector<int64_t> keys;    // distinct raw ids (export_state(): ascending)
  std::vector<int64_t> counts;  // [keys.size()], each >= 1
};

class DynamicAdmissionCounter {
 public:
  // capacity >= 1 slots, rounded up to whole buckets; bucket_capacity >= 1, rounded up to a
  // multiple of 16 (dynamicemb rounds a counter's bucket capacity the same way). Throws
  // std::invalid_argument otherwise (the options were validated before: a programmer error).
  DynamicAdmissionCounter(int64_t capacity, int64_t bucket_capacity);

  // Adds count (>= 1) to key's counter, inserting it (evicting its bucket's smallest count when
  // full), and returns the key's total (saturating at 2^32 - 1).
  int64_t add(int64_t key, int64_t count);
  // Forgets key (no-op when absent).
  void erase(int64_t key);
  // key's count, 0 when absent.
  int64_t count(int64_t key) const;

  int64_t size() const { return size_; }
  int64_t capacity() const { return static_cast<int64_t>(num_buckets_) * bucket_capacity_; }
  int64_t bucket_capacity() const { return bucket_capacity_; }
  int64_t memory_bytes() const;

  // Every entry, sorted by key.
  DynamicCounterState export_state() const;
  // Replaces the contents with `state`, inserted by count descending (ties: digest, then key,
  // descending); an entry whose bucket is full is dropped — what eviction would have dropped
  // first.
  // Returns the number dropped. Throws DataError naming `where` (one line) for arrays of different
  // lengths, a key given twice or a count < 1.
  int64_t load(const DynamicCounterState& state, const std::string& where);
  void clear();

 private:
  // The slot of key (hash h) in its bucket, or -1.
  int64_t find_slot(int64_t key, uint64_t h) const;

  uint32_t bucket_capacity_ = 0;
  uint64_t num_buckets_ = 0;
  int64_t size_ = 0;
  dynamic_hash::HugePageArray<uint8_t> digests_;  // [num_buckets * bucket_capacity]
  dynamic_hash::HugePageArray<int64_t> keys_;     // [num_buckets * bucket_capacity]
  dynamic_hash::HugePageArray<uint32_t> counts_;  // [num_buckets * bucket_capacity]
  std::vector<uint32_t> sizes_;                   // [num_buckets]: occupied slots of each bucket
};

}  // namespace tzrec::embedding
