// DynamicTable: the id → row index of a dynamic embedding table — TorchEasyRec's `dynamicemb { }`
// (feature.proto DynamicEmbedding), built on NVIDIA dynamicemb's scored, bucketed hash table
// (HierarchicalKV style). docs/tzrec-compatibility.md §5.13. Plain C++17, no torch: the caller owns
// the weight and optimizer-state tensors and indexes them with the rows this table hands out.
//
// Keys are raw int64 ids, any value. Each live key owns a row of the caller's dense row store.
// Rows never move: they are handed out from [0, max_capacity()) — the lowest freed row first, else
// the next never-used one — so rows in use always lie in [0, num_rows()) and a weight tensor of
// num_rows() rows (grown by appending) covers them. A row changes owner only by eviction; the new
// owner is reported so the caller re-initialises the row and resets its optimizer state.
//
// Index: buckets of B = bucket_capacity slots (a multiple of 16); a key's hash picks its bucket
// and it lives in no other. A slot holds key, row and a 32-bit score; a one-byte digest per slot
// (0: empty) is scanned 16 at a time before keys are compared. A bucket is two halves of B / 2
// slots, a half is lines of 4 slots (64 bytes, one cache line); the hash also picks the key's home
// half, and its digest the home line in it. A key lives in its home line while that has room, else
// elsewhere in its home half, and only when that half is full in the other half (marked displaced;
// its home half counts it as away). A probe first compares the four keys of the home line — one
// cache line, where most keys are (a home line receives a Poisson number of keys, mean 4 at full
// buckets, so at most about 80% fit; measured 76% at 50M live keys after 22M evictions) — then
// scans the home half's digests, then the other half's only when the key's home half has keys
// away. Inserts keep keys at home (settle()): a new key whose home line is full takes the slot of a
// key there that lives away from its own home line, which moves to the slot the new key was given
// (never out of its home half); an eviction brings home a key of the vacated slot's line living
// elsewhere, or, when the victim is in the other half, a key displaced from it. A STEP or TIMESTAMP
// training call that meets a key away from its home line twice moves it there after the probe
// (bring_home(): it trades places with a resident living away from its own line, else with the
// resident of the oldest score not met in the call), so the hot keys of a skewed stream take one
// compare from the next call on. Where a key sits inside its bucket changes nothing else:
// eviction, rows and scores are those of the bucket as a whole.
//
// Training, find_or_insert(ids, step, timestamp_ms), per id, in first-occurrence order of the
// distinct ids:
// - a key in the table keeps its row; its score becomes: STEP the step, TIMESTAMP the time (ms),
//   LFU its count + 1 per occurrence (duplicates count); NO_EVICTION has no score.
// - a key not in the table, with frequency admission: the occurrences in this call are added to
//   the admission counter (dynamic_admission_counter.h); it is admitted once its count reaches
//   threshold (then erased from the counter), otherwise it gets row -1 (the caller gives it the
//   admission initializer's value and drops its gradient; dynamicemb does not store it).
// - an admitted key not in the table gets a row and the score STEP: step, TIMESTAMP: time, LFU:
//   its occurrences in this call. If its bucket is full: while capacity() < max_capacity() the
//   index grows first; at the top the bucket's key with the smallest score is evicted (the
//   smallest row on ties: dynamicemb's tie order is its slot order, here it depends on the
//   entries alone, so a table restored from a checkpoint evicts exactly as the uninterrupted one)
//   and its row goes to the new key — except keys found or inserted in this call, which are
//   never evicted by it (dynamicemb pins the keys of the batch in flight; STEP and TIMESTAMP pin
//   here every key holding the call's step or time, so a second call with the same step cannot
//   evict the first call's keys either, and the step must grow from one training step to the
//   next; LFU pins the call's rows); a bucket holding only pinned keys rejects the new key (row
//   -1). NO_EVICTION never evicts: once max_capacity() rows are live (or, rarely, the key's bucket
//   is full at the top) new keys get -1.
// Duplicate ids of a call get the same row. Call it once per table and training step, with the
// ids of all the table's features. Evaluation and predict use find(): rows of keys in the table,
// -1 otherwise, nothing changes (no score, no counting).
//
// Capacity: the table holds at most max_capacity() rows = max_capacity rounded up to whole
// buckets (dynamicemb's per-rank capacity; for the evicting strategies also up to a bucket count
// that doubling from init_capacity reaches exactly, at most 1/64 more). The index starts at
// init_capacity (same rounding) and doubles — a bucket splits into two, rows keep their numbers —
// when a call's new keys would fill more than 3/4 of the slots (NO_EVICTION: 1/2), or a new key's
// bucket is full, until max_capacity(). Index slots: one per row for the evicting strategies, so
// live rows reach max_capacity() as buckets fill (B = 128, measured: offered as many distinct keys
// as rows, the table keeps 96.5% of them — evictions start with the first full buckets —; offered
// 1.5 times as many, 100%); two per row for NO_EVICTION (dynamicemb's fixed 0.5 load factor for
// it), so its buckets practically never fill before the rows run out.
//
// Growth: a doubling writes every key into new arrays twice the size (the probe threads split the
// buckets between them). Most of its time is the kernel paging in that memory (measured, 37.5M
// keys into 100M slots: 1.8 s of 2.1), so once the table holds 5/6 of the keys that trigger the
// next doubling, a background thread allocates and pages in its arrays while training goes on,
// and the doubling itself only moves the keys. A doubling that comes before the thread is done
// stops it and pages in the rest itself; one forced early by a full bucket allocates its arrays
// itself. Meanwhile the table holds those arrays on top of its index, as every doubling does
// while it runs.
//
// Eviction in a STEP or TIMESTAMP table takes the first valid entry of its bucket's victim list
// (dynamic_victim_lists.h: the bucket's 8 smallest (score, row), found by one scan and exact while
// scores only grow) instead of scanning the bucket each time; the same key as the scan would take.
//
// Memory: 17 bytes per index slot (key 8, score and row 8, digest 1) + 16 per bucket, + 162 per
// bucket for the victim lists of a STEP or TIMESTAMP table once it evicts; the admission counter
// 13 bytes per counter slot. Not thread-safe; concurrent find() calls are fine.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "embedding/dynamic_admission_counter.h"
#include "embedding/dynamic_victim_lists.h"

namespace tzrec::embedding {

// DynamicEmbedding.score_strategy (CUSTOMIZED — scores set by the user through dynamicemb's
// set_score, which TorchEasyRec never calls — is refused).
enum class DynamicScoreStrategy { kTimestamp, kStep, kLfu, kNoEviction };

// "TIMESTAMP", "STEP", "LFU", "NO_EVICTION".
const char* dynamic_score_strategy_name(DynamicScoreStrategy strategy);
// Parses a score_strategy string. Throws NotSupportedError for CUSTOMIZED and ConfigError
// ("<field_path>: unknown 'FOO'; use TIMESTAMP, STEP, LFU or NO_EVICTION") otherwise.
DynamicScoreStrategy parse_dynamic_score_strategy(const std::string& name, const std::string& field_path);

// DynamicEmbFrequencyAdmissionStrategy.
struct DynamicAdmissionOptions {
  int64_t threshold = 0;                   // admitted once seen this many times (0 and 1: at once)
  std::optional<int64_t> counter_capacity;  // unset: the table's max_capacity
  int64_t counter_bucket_capacity = 1024;   // rounded up to a multiple of 16, as dynamicemb does
};

// One table instance (on one rank: see per_rank()).
struct DynamicTableOptions {
  int64_t max_capacity = 0;              // rows, >= 1
  std::optional<int64_t> init_capacity;  // init_capacity_per_rank; unset: max_capacity
  int64_t bucket_capacity = 128;         // a multiple of 16
  DynamicScoreStrategy score_strategy = DynamicScoreStrategy::kStep;
  std::optional<DynamicAdmissionOptions> admission;
  // Config path of the DynamicEmbedding message, prefix of ConfigErrors
  // ("feature_configs[3].id_feature.dynamicemb").
  std::string field_path = "dynamicemb";
  // Named in DataErrors about checkpoint state.
  std::string table_name = "dynamic";

  // The options of one rank's shard when ids are spread over world_size ranks by id_owner_rank() (id_owner.h):
  // max_capacity ceil(max_capacity / world_size) and the counter floor(counter_capacity /
  // world_size) rounded up to a multiple of 16 (TorchEasyRec's and dynamicemb's per-rank sizes);
  // init_capacity is already per rank.
  DynamicTableOptions per_rank(int world_size) const;
};

// Throws ConfigError (one line, naming the field under field_path) for max_capacity < 1 or above
// 2^30, init_capacity_per_rank < 1, a bucket_capacity that is not a positive multiple of 16 (at
// most 2^20), a threshold outside [0, 2^32 - 1], counter_capacity < 1 or
// counter_bucket_capacity < 1.
void validate_dynamic_table_options(const DynamicTableOptions& options);

// What one training call did.
struct DynamicTableLookup {
  std::vector<int64_t> rows;          // [n]: the row of each id, -1 when it has none
  std::vector<int64_t> new_keys;      // keys given a row in this call, first-occurrence order
  std::vector<int64_t> new_rows;      // their rows: initialise the weights, reset optimizer state
  std::vector<int64_t> evicted_keys;  // keys evicted in this call
  std::vector<int64_t> evicted_rows;  // the rows they held (each one is also in new_rows)
  int64_t not_admitted = 0;           // distinct ids below the admission threshold
  int64_t rejected = 0;               // distinct admitted ids left without a row
  int64_t capacity = 0;               // capacity() after the call
  int64_t num_rows = 0;               // num_rows() after the call
};

// Where a training lookup writes the row of each id, in the caller's numbering: rows[i] = offset +
// the row of ids[i], or `absent` when it has none (a block of a larger weight tensor, a reserved row
// for ids without one). The probe threads write the rows of the ids found as they find them, so
// the caller needs no pass of its own over the ids.
struct DynamicRowsOut {
  int64_t* rows = nullptr;  // [n]
  int64_t offset = 0;
  int64_t absent = -1;
};

// A table's entries, as checkpoints store them (live rows only).
struct DynamicTableState {
  std::vector<int64_t> keys;    // distinct raw ids (export_state(): ascending)
  std::vector<int64_t> rows;    // [keys.size()]: the row of each key
  std::vector<int64_t> scores;  // [keys.size()]: STEP the step, TIMESTAMP ms, LFU the count,
                                // NO_EVICTION 0
  DynamicCounterState counter;  // the admission counter's entries (empty without admission)
};

// How load() numbers rows.
enum class DynamicRowMode {
  kKeep,     // each key keeps its row (each < max_capacity()); the weights load as they are
  kCompact,  // rows 0, 1, ... in index order (another capacity, world size, or a filtered state)
};

struct DynamicTableLoadResult {
  std::vector<int64_t> rows;    // [state.keys.size()]: the row entry i now has, -1 when dropped
  int64_t dropped = 0;          // entries that did not fit (a full bucket at the top, or, under
                                // NO_EVICTION, past max_capacity() rows)
  int64_t counter_dropped = 0;  // admission counter entries that did not fit
  int64_t capacity = 0;
  int64_t num_rows = 0;
};

// Where the live keys sit in the index (see "Index" above): each key in its home line, elsewhere in
// its home half, or displaced into the other half.
struct DynamicIndexStats {
  int64_t keys = 0;
  int64_t at_home_line = 0;
  int64_t displaced = 0;  // outside their home half
};

class DynamicTable {
 public:
  // Validates the options (validate_dynamic_table_options) and allocates the index at
  // init_capacity.
  explicit DynamicTable(DynamicTableOptions options);
  ~DynamicTable();
  DynamicTable(DynamicTable&&) noexcept;
  DynamicTable& operator=(DynamicTable&&) noexcept;

  // Training lookup of ids [n] (see the file comment). step and timestamp_ms are the scores of
  // STEP and TIMESTAMP, stored in 32 bits: steps saturate at 2^32 - 1; times are kept relative to
  // a base that follows the newest time, so times within 2^31 ms (~24.8 days) of the newest keep
  // their order and older ones tie at the bottom.
  DynamicTableLookup find_or_insert(const int64_t* ids, size_t n, int64_t step, int64_t timestamp_ms);
  // The same into `out` (its buffers are reused).
  void find_or_insert(const int64_t* ids, size_t n, int64_t step, int64_t timestamp_ms, DynamicTableLookup& out);
  // The same with the rows written to `into` (out.rows is not written; new_rows, evicted_rows and
  // the rest of `out` stay in the table's numbering).
  void find_or_insert(const int64_t* ids, size_t n, int64_t step, int64_t timestamp_ms, DynamicTableLookup& out,
                      const DynamicRowsOut& into);
  // Evaluation / predict: rows_out[i] = the row of ids[i], -1 when absent. No state changes.
  void find(const int64_t* ids, size_t n, int64_t* rows_out) const;
  // The same with the rows written to `into` (absent ids: into.absent).
  void find(const int64_t* ids, size_t n, const DynamicRowsOut& into) const;
  // Threads that probe the index for the ids of one call (find, and the lookup of the ids already
  // in the table in find_or_insert): calls of at least kParallelProbeIds ids are split into that
  // many contiguous parts, each probed by a thread of the OpenMP pool (the probe waits on memory;
  // the results do not depend on the count). Default 1.
  void set_probe_threads(int threads) { probe_threads_ = threads < 1 ? 1 : threads; }
  static constexpr size_t kParallelProbeIds = 16384;

  // Every live entry sorted by key, and the admission counter's entries.
  DynamicTableState export_state() const;
  // Replaces the table's contents with `state` (a state exported by any table: another capacity,
  // bucket layout or world size — filter its entries with id_owner_rank() (id_owner.h) first), sizing the index
  // for them as growth would. Where entries compete for a bucket's slots at max_capacity() (or,
  // under NO_EVICTION, for its max_capacity() rows) the highest scores stay (ties: the larger row,
  // then key) and the others are dropped — what eviction would have done. With kKeep the rows stay
  // (rows below num_rows() that no entry holds are handed out first); with kCompact the kept
  // entries get rows 0, 1, ... and result.rows says where each entry's weights go. Throws
  // DataError (one line, naming table_name) for arrays of different lengths, a key given twice, a
  // negative row, with kKeep a row >= max_capacity() or given twice, a negative STEP / LFU score,
  // or a bad counter state; the table is unchanged then.
  DynamicTableLoadResult load(const DynamicTableState& state, DynamicRowMode mode);

  int64_t size() const { return live_; }  // live keys (= rows in use)
  int64_t capacity() const;               // rows the index holds now without growing
  int64_t max_capacity() const { return max_rows_; }
  int64_t num_rows() const { return next_row_; }  // rows in use lie in [0, num_rows())
  int64_t bucket_capacity() const { return bucket_capacity_; }
  int64_t num_buckets() const { return static_cast<int64_t>(num_buckets_); }
  DynamicIndexStats index_stats() const;
  int64_t memory_bytes() const;  // index (and the next one while prepared), free rows and admission counter
  const DynamicTableOptions& options() const { return options_; }
  // The admission counter, null without admission.
  const DynamicAdmissionCounter* admission_counter() const { return counter_.get(); }
  // Doublings of the index whose new arrays a background thread had allocated and paged in
  // beforehand (see "Growth" above).
  int64_t prepared_growths() const { return prepared_growths_; }

 private:
  // A slot: its key and its meta, score << 32 | displaced << 31 | row (rows < 2^31), side by side,
  // so a probe that finds its key has the row and score in the same cache line (16-byte slots
  // never straddle a line). A full bucket evicts its smallest meta_order — the smallest score, the
  // smallest row on ties.
  struct alignas(16) Slot {
    int64_t key = 0;
    uint64_t meta = 0;
  };
  static constexpr uint64_t kDisplaced = uint64_t{1} << 31;  // the key lives outside its home half
  // An empty slot's meta: row 2^31 - 1, which no key has (rows < max_capacity() < 2^31 - 1).
  static constexpr uint64_t kEmptyMeta = 0x7fffffffu;
  static uint64_t make_meta(uint32_t score, uint32_t row) { return uint64_t{score} << 32 | row; }
  static uint32_t meta_row(uint64_t meta) { return static_cast<uint32_t>(meta) & 0x7fffffffu; }
  static uint32_t meta_score(uint64_t meta) { return static_cast<uint32_t>(meta >> 32); }
  static uint64_t meta_order(uint64_t meta) { return meta & ~kDisplaced; }
  static uint64_t with_score(uint64_t meta, uint32_t score) { return (meta & 0xffffffffu) | uint64_t{score} << 32; }
  // A slot's one-byte digest: the hash's low byte, 1 for 0 — digest 0 marks an empty slot.
  static uint8_t slot_digest(uint64_t h) {
    const uint8_t d = dynamic_hash::digest_of(h);
    return d == 0 ? uint8_t{1} : d;
  }
  // The home half of a key of hash h (a bit apart from the digest's and the bucket's).
  static uint32_t home_half(uint64_t h) { return static_cast<uint32_t>(h >> 8) & 1u; }
  static constexpr uint32_t kLineSlots = 4;  // a line: 4 slots of 16 bytes, one cache line
  // The first slot of the home line of a key of digest d (slot_digest) in the half of half_slots
  // slots from half_base: the line (d · lines) >> 8, so the keys of a line share a range of
  // digests and the digests alone tell where a key belongs (for more than 256 lines a half, only
  // 255 of them are home lines).
  static uint64_t home_line_of(uint64_t half_base, uint32_t half_slots, uint8_t d) {
    return half_base + ((uint64_t{d} * (half_slots / kLineSlots)) >> 8) * kLineSlots;
  }
  // The digests whose home line (home_line_of) is the line `line_offset` slots into a half of
  // half_slots: the range [first, second), first >= 1 (digest 0 marks an empty slot).
  static std::pair<uint32_t, uint32_t> digests_homed_at(uint32_t half_slots, uint64_t line_offset) {
    const uint64_t lines = half_slots / kLineSlots, line = line_offset / kLineSlots;
    return {static_cast<uint32_t>(std::max<uint64_t>((256 * line + lines - 1) / lines, 1)),
            static_cast<uint32_t>(std::min<uint64_t>((256 * line + 255) / lines + 1, 256))};
  }
  static uint64_t home_line(uint64_t half_base, uint32_t half_slots, uint64_t h) {
    return home_line_of(half_base, half_slots, slot_digest(h));
  }
  // A line's four slots compared at once (no branch per slot): bit k of `keys` is set when slot k
  // holds the key, bit k of `empty` when slot k is empty (kEmptyMeta).
  struct LineMatch {
    uint32_t keys;
    uint32_t empty;
  };
  static LineMatch match_line(const Slot* line, int64_t key);
  // The home line of a key of hash h in an index of num_buckets buckets of this table's size.
  uint64_t home_line_in(uint64_t h, uint64_t num_buckets) const {
    const uint64_t base = dynamic_hash::bucket_of(h, num_buckets) * bucket_capacity_;
    return home_line(base + uint64_t{home_half(h)} * half_slots_, half_slots_, h);
  }
  // One half of a bucket: its occupied slots (digest not 0; emptied only by rebuilding the index)
  // and how many keys of this home live in the other half.
  struct Half {
    uint32_t size = 0;
    uint32_t away = 0;
  };
  // One index's arrays (the table's, or a doubling's new ones) and its bucket size.
  struct IndexArrays {
    Slot* slots;
    uint8_t* digests;
    Half* halves;
    uint32_t bucket_capacity;
    uint32_t half_slots;
    // Of the bucket whose first slot is `base`: its two Halfs; the half (0 or 1) slot s is in; the
    // home half of the key in slot s (its half, the other when displaced); that key's home line
    // (its first slot), from its digest.
    Half* halves_of(uint64_t base) const { return halves + 2 * (base / bucket_capacity); }
    uint32_t half_of(uint64_t base, uint64_t s) const { return s - base < half_slots ? 0 : 1; }
    uint32_t home_half_at(uint64_t base, uint64_t s) const {
      return (slots[s].meta & kDisplaced) ? 1 - half_of(base, s) : half_of(base, s);
    }
    uint64_t home_line_at(uint64_t base, uint64_t s) const {
      return home_line_of(base + uint64_t{home_half_at(base, s)} * half_slots, half_slots, digests[s]);
    }
  };
  IndexArrays arrays() { return IndexArrays{slots_.data(), digests_.data(), halves_.data(), bucket_capacity_, half_slots_}; }
  // Places new key x (its meta without the displaced bit) of hash h in the bucket at `base` (its
  // first slot) of `index`, which has room: an empty slot of its home line, else of its home half,
  // else of the other half, then settle(); counts it in its half's size.
  static void place_new_key(const IndexArrays& index, uint64_t base, uint64_t h, Slot x);
  // Writes new key x (its meta without the displaced bit) of hash h into the bucket at `base`,
  // given `free`, the empty slot chosen for it, or with `vacated` the one its victim left. Its
  // slot: `free` when that is in the key's home line; else a home-line slot whose key (living away
  // from its own home line) moved to `free`, unless that would take the key out of its home half;
  // else, for a vacated slot, a slot whose key moved home to `free` (a key of `free`'s line, or one
  // displaced into the new key's home half when `free` is in the other half); else `free`. (An
  // empty slot's line has all its keys at home, and its half all its keys: a key goes elsewhere
  // only when its line or half is full, and slots are emptied only by rebuilding the index.) Keeps
  // displaced bits and away counts, the new key's too (put_key).
  static void settle(const IndexArrays& index, uint64_t base, uint64_t h, uint64_t free, bool vacated, Slot x);
  // Moves the key at slot `from` of the bucket at `base` to the empty (or vacated) slot `to`,
  // keeping its displaced bit and its home half's away count right.
  static void move_key(const IndexArrays& index, uint64_t base, uint64_t from, uint64_t to);
  // Writes key x (its digest, its home half) into slot `to` of the bucket at `base`, with its
  // displaced bit and its home half's away count as move_key keeps them.
  static void put_key(const IndexArrays& index, uint64_t base, Slot x, uint8_t digest, uint32_t its_half, uint64_t to);
  // The keys of slots a and b of the bucket at `base` trade places (as move_key keeps them).
  static void swap_keys(const IndexArrays& index, uint64_t base, uint64_t a, uint64_t b);
  // A key found at `slot`, away from its home line, in a training call at score `now` (a STEP or
  // TIMESTAMP table) for at least the second time: it trades places with a resident of its home
  // line — one living away from its own home line, else the one of the smallest meta_order whose
  // score is not `now` (none: it stays). Nothing when the key has moved since it was found.
  void bring_home(int64_t key, uint64_t slot, uint32_t now);
  // Empty slots hold kEmptyMeta and key 0 — except in the line that is key 0's home line in an
  // index of num_buckets buckets, whose empty slots hold the smallest key homed in another line —
  // so the probe's compare of a home line's four keys, which reads no digest, never matches an
  // empty slot, and an empty slot there tells that the key is absent (a key lives away from its
  // home line only when that line is full, and slots are emptied only by rebuilding the index).
  void mark_empty_slots(Slot* slots, const uint8_t* digests, uint64_t num_buckets) const;
  static constexpr Slot empty_slot(int64_t key = 0) { return Slot{key, kEmptyMeta}; }

  // Slot index of key (hash h), or -1.
  int64_t find_slot(int64_t key, uint64_t h) const;
  // Slot index of key (hash h) among the half_slots slots from half_base, or -1.
  int64_t find_in_half(int64_t key, uint64_t h, uint64_t half_base) const;
  bool bucket_full(uint64_t bucket) const {
    return halves_[2 * bucket].size + halves_[2 * bucket + 1].size == bucket_capacity_;
  }
  // Calls fn(slot) for every occupied slot of `bucket`, half 0 first; of every bucket in order.
  template <class Fn>
  void for_each_entry_of(uint64_t bucket, Fn&& fn) const;
  template <class Fn>
  void for_each_entry(Fn&& fn) const;
  // Calls on(i, slot, at_home) for every id, slot -1 when absent, at_home when it is in the key's
  // home line (prefetching ahead).
  template <class OnSlot>
  void probe_batch(const int64_t* ids, size_t n, OnSlot&& on) const;
  uint32_t encode_time(int64_t timestamp_ms);
  int64_t decode_score(uint32_t score) const;
  void allocate_index(uint64_t num_buckets);
  void double_buckets();
  // Starts preparing the next doubling's arrays when it is due (see "Growth" above).
  void prepare_growth();
  bool crowded(int64_t keys, uint64_t buckets) const;
  bool grow_needed(int64_t new_keys) const;
  uint32_t allocate_row();
  void prefetch_bucket(uint64_t h, bool with_slots) const;
  void prefetch_bucket_slots(uint64_t bucket) const;
  int64_t victim_hint(uint64_t base, uint32_t now) const;
  int64_t pick_victim(uint64_t base, uint32_t now);
  // pick_victim of a STEP or TIMESTAMP table whose scores are all at most `now`: the first entry
  // of the bucket's victim list still holding its (score, row), the list refilled by a scan when
  // it runs out (dynamic_victim_lists.h).
  int64_t pick_listed_victim(uint64_t base, uint32_t now);
  // The slot the bucket's next eviction takes when its victim list has it (to prefetch), else -1.
  int64_t listed_victim_ahead(uint64_t bucket) const;
  bool pinned(uint32_t row) const { return (protected_[row >> 6] >> (row & 63)) & 1; }
  int64_t insert_new(int64_t key, uint64_t h, uint32_t score, uint32_t now, DynamicTableLookup& out);
  void activate_protection();

  DynamicTableOptions options_;
  DynamicScoreStrategy strategy_;
  uint32_t bucket_capacity_ = 0;
  uint32_t half_slots_ = 0;  // bucket_capacity_ / 2
  uint64_t num_buckets_ = 0;
  uint64_t initial_buckets_ = 0;  // num_buckets_ at init_capacity
  uint64_t top_buckets_ = 0;      // num_buckets_ at max_capacity()
  int64_t max_rows_ = 0;
  int64_t live_ = 0;
  int64_t next_row_ = 0;
  std::vector<uint32_t> free_rows_;  // descending: back() is the lowest
  // Slots, [num_buckets * B] each (digests: and kDigestPadding zeros after them); half k of bucket
  // b holds slots [b * B + k * B / 2, ... + halves_[2 * b + k].size).
  dynamic_hash::HugePageArray<uint8_t> digests_;
  dynamic_hash::HugePageArray<Slot> slots_;
  std::vector<Half> halves_;  // [num_buckets * 2]
  // The next doubling's arrays, allocated and paged in by a background thread (`done`). Dropped
  // (the table destroyed, or its index rebuilt by load()), it stops the thread and waits for it
  // before the arrays go.
  struct PreparedIndex {
    uint64_t num_buckets = 0;
    dynamic_hash::HugePageArray<uint8_t> digests;
    dynamic_hash::HugePageArray<Slot> slots;
    std::atomic<bool> stop{false};  // the thread returns early once set
    std::future<void> done;
    ~PreparedIndex() {
      stop.store(true, std::memory_order_relaxed);
      if (done.valid()) done.wait();
    }
  };
  std::unique_ptr<PreparedIndex> prepared_;
  int64_t prepared_growths_ = 0;
  int64_t time_base_ms_ = 0;         // TIMESTAMP: score s > 0 means time_base_ms_ + s - 1
  bool has_time_base_ = false;
  std::unique_ptr<DynamicAdmissionCounter> counter_;
  // LFU: rows pinned for the call in progress (bit per row), filled once a call must evict. (STEP
  // and TIMESTAMP pin by score: the keys of the call hold its step / time.)
  std::vector<uint64_t> protected_;
  bool protecting_ = false;
  // STEP and TIMESTAMP: the buckets' next victims (allocated at the first eviction), used while the
  // call's score is at least every score in the table (lists_on_); max_score_ bounds them all.
  DynamicVictimLists victims_;
  uint32_t max_score_ = 0;
  bool lists_on_ = false;
  // Per-call scratch.
  int probe_threads_ = 1;
  DynamicRowsOut call_rows_;  // the call's rows, as written so far (activate_protection pins them)
  size_t call_ids_ = 0;
  // Calls fn(row) for each id of the call in progress that has a row, in the table's numbering.
  template <class Fn>
  void for_each_call_row(Fn&& fn) const;
  // Runs probe_batch over contiguous parts of ids on probe_threads_ threads: on(part, i, slot, at_home)
  // with i the position in the whole call.
  template <class OnSlot>
  void probe_parts(const int64_t* ids, size_t n, OnSlot&& on) const;
  // Calls fn(part, lo, hi) for `parts` contiguous ranges [lo, hi) covering [0, n), each on a
  // thread of the OpenMP pool (one part: on the caller).
  template <class Fn>
  static void for_each_part(uint64_t n, uint64_t parts, Fn&& fn);
  std::vector<std::vector<uint32_t>> missing_parts_;  // per probe part, then merged in order
  struct AwayHit {
    int64_t key;
    uint64_t slot;
  };
  std::vector<std::vector<AwayHit>> away_parts_;  // per probe part: repeated keys found away from home
  std::vector<uint32_t> missing_;      // positions of ids not found
  std::vector<uint32_t> missing_key_;  // their distinct-key index
  std::vector<int64_t> distinct_keys_;
  std::vector<uint64_t> distinct_hashes_;
  std::vector<uint32_t> distinct_counts_;
  std::vector<uint32_t> admitted_keys_;  // distinct indices of the admitted keys
  std::vector<int64_t> distinct_rows_;
  std::vector<int32_t> dedup_;  // open-addressing map key → distinct index
};

}  // namespace tzrec::embedding
