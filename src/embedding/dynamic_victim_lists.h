// DynamicVictimLists: for each bucket of a STEP or TIMESTAMP dynamic table (dynamic_table.h), the
// keys its next evictions take, so that an evicting insert reads one slot instead of scanning the
// bucket's B slots for the smallest (score, row).
//
// A list is filled by one scan of its full bucket at score `now` (the call's step or time): the
// kLength keys of smallest (score, row) among those whose score is below `now` (the others are
// the call's own, pinned), in ascending order. It stays exact while scores only grow: a key not in
// the list then had a larger (score, row) than the list's last entry when the list was filled, and
// a lookup or an insert since gave its key a score of at least that call's `now` — larger still.
// So the first entry whose key still holds the recorded (score, row) is the bucket's smallest;
// entries whose key was looked up since (its score moved up) are dropped on the way. Calls whose
// score goes back (an earlier step or time than one seen before) must clear every list, as must
// anything that rebuilds the index or rewrites scores (growth, load()). Plain C++17, no torch.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tzrec::embedding {

class DynamicVictimLists {
 public:
  static constexpr uint32_t kLength = 8;

  struct Entry {
    int64_t key;
    uint64_t order;  // (score << 32 | row), as the table compares keys for eviction
  };

  // Lists for num_buckets buckets, all empty; 0 frees them.
  void reset(uint64_t num_buckets) {
    entries_.assign(num_buckets * kLength, Entry{});
    slots_.assign(num_buckets * kLength, 0);
    heads_.assign(num_buckets, 0);
    ends_.assign(num_buckets, 0);
    entries_.shrink_to_fit();
    slots_.shrink_to_fit();
    heads_.shrink_to_fit();
    ends_.shrink_to_fit();
  }
  bool allocated() const { return !heads_.empty(); }
  // Every list empty (the buckets kept).
  void clear() {
    std::fill(heads_.begin(), heads_.end(), 0);
    std::fill(ends_.begin(), ends_.end(), 0);
  }
  bool empty(uint64_t bucket) const { return heads_[bucket] == ends_[bucket]; }
  const Entry& front(uint64_t bucket) const { return entries_[bucket * kLength + heads_[bucket]]; }
  // Where the first entry's key was in its bucket (keys move inside their bucket).
  uint32_t front_slot(uint64_t bucket) const { return slots_[bucket * kLength + heads_[bucket]]; }
  void pop(uint64_t bucket) { ++heads_[bucket]; }

  // Refilling a bucket's list: start(), then offer() for every candidate key of the bucket.
  void start(uint64_t bucket) { heads_[bucket] = ends_[bucket] = 0; }
  // Keeps the key when it is among the kLength smallest orders offered since start().
  void offer(uint64_t bucket, int64_t key, uint64_t order, uint32_t slot) {
    Entry* list = &entries_[bucket * kLength];
    uint32_t* at = &slots_[bucket * kLength];
    uint8_t& end = ends_[bucket];
    if (end == kLength && order >= list[kLength - 1].order) return;
    uint32_t i = end == kLength ? kLength - 1 : end++;
    for (; i > 0 && list[i - 1].order > order; --i) {
      list[i] = list[i - 1];
      at[i] = at[i - 1];
    }
    list[i] = Entry{key, order};
    at[i] = slot;
  }

  int64_t memory_bytes() const {
    return static_cast<int64_t>(entries_.capacity() * sizeof(Entry) + slots_.capacity() * sizeof(uint32_t) +
                                heads_.capacity() + ends_.capacity());
  }

 private:
  // [buckets * kLength]: bucket b's list is [b * kLength + heads_[b], b * kLength + ends_[b]).
  std::vector<Entry> entries_;
  std::vector<uint32_t> slots_;
  std::vector<uint8_t> heads_;
  std::vector<uint8_t> ends_;
};

}  // namespace tzrec::embedding
