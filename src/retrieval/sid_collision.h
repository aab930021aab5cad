// Best-effort resolution of semantic-ID collisions (TorchEasyRec's tzrec/utils/sid/collision.py,
// used by `tzrec resolve_sid_collisions`; docs/tzrec-compatibility.md §3.5), no torch.
//
// Items whose SIDs fall in one bucket beyond `capacity` are moved to another last-layer code of
// their band (the same codes on every layer but the last):
//   - a SID's band is the mixed-radix number of its codes but the last; its bucket key is
//     band · last_size + last code;
//   - within a bucket the items are ranked by a stable hash of their item id (then input order);
//     the first `capacity` keep their SID with slots 1..capacity, the rest overflow;
//   - the overflow items, in (band, last code, hash) order, take the first of their candidate last
//     codes (the model's candidates, or draws from the hash for the random strategy) whose bucket
//     holds fewer than `capacity` items (a candidate equal to their own code is skipped), getting
//     the next slot there; an item with no free candidate keeps its SID, over capacity, with the
//     next slot of its bucket. Every item keeps a SID.
// Item ids hash as TorchEasyRec's stable_order_hash: an integer id as its 64 bits, a string id as
// pandas' hash_array (SipHash-2-4 of its UTF-8 bytes under pandas' default key, then a 64-bit
// mix), each then mixed by SplitMix64 with the tool's fixed seed 2026.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tzrec::retrieval {

// Throws UsageError for a codebook check_sid_codebook refuses (retrieval/sid_quality.h: no layer, a
// size < 1, a key space beyond int64) or a capacity < 1.
void check_sid_collision_config(const std::vector<int64_t>& layer_sizes, int64_t capacity);

// The tool's SplitMix64 (seed 2026) of a 64-bit value.
uint64_t sid_splitmix64(uint64_t value);
// pandas.util.hash_array of one string (categorize or not, the same per value).
uint64_t pandas_string_hash(std::string_view text);
// stable_order_hash of an integer / a string item id.
inline uint64_t sid_order_hash(int64_t id) { return sid_splitmix64(static_cast<uint64_t>(id)); }
inline uint64_t sid_order_hash(std::string_view id) { return sid_splitmix64(pandas_string_hash(id)); }

// The bucket key of one SID (`layer_sizes.size()` codes): band · last_size + last code.
int64_t sid_bucket_key(const int64_t* codes, const std::vector<int64_t>& layer_sizes);

// The occupancy of an already published corpus (appending): its occupied bucket keys, strictly
// ascending, and their item counts. Its buckets keep their items; new items continue their slots.
struct SidPriorOccupancy {
  std::vector<int64_t> bucket_keys;
  std::vector<int64_t> bucket_counts;
  // Items of bucket `key` (0 when not occupied).
  int64_t count(int64_t key) const;
};

struct SidCollisionPlan {
  int64_t num_layers = 0;
  std::vector<int64_t> layer_sizes;
  int64_t capacity = 0;
  std::vector<int64_t> band_ids;      // [N] per row
  std::vector<int64_t> last_codes;    // [N] original last-layer code per row
  std::vector<int64_t> slots;         // [N] 1-based rank of the row in its bucket (hash order)
  std::vector<int64_t> bucket_keys;   // occupied buckets, ascending
  std::vector<int64_t> bucket_counts; // rows per bucket, aligned with bucket_keys
  std::vector<int64_t> prior_counts;  // published items per bucket, aligned with bucket_keys
  SidPriorOccupancy prior;            // empty for a full resolve
  std::vector<int64_t> overflow_rows; // rows ranked beyond capacity, in processing order
  int64_t rows() const { return static_cast<int64_t>(band_ids.size()); }
};

// The plan of `codes` ([N * layers] row-major, each code inside its layer, checked by the caller)
// with one order hash per row. With a `prior` (appending), a bucket already holding P items admits
// capacity − P more and its new items are numbered from P + 1. Throws UsageError as
// check_sid_collision_config, DataError for prior keys outside the key space.
SidCollisionPlan plan_sid_collisions(const std::vector<int64_t>& codes, const std::vector<uint64_t>& order_hashes,
                                     const std::vector<int64_t>& layer_sizes, int64_t capacity,
                                     SidPriorOccupancy prior = {});

// Random strategy: `min(num_candidates, last_size - 1)` last codes per overflow row, drawn from
// the row's order hash (with replacement; the origin may be drawn and is then skipped). Throws
// UsageError when last_size < 2.
std::vector<int64_t> random_candidate_last_codes(const std::vector<uint64_t>& overflow_hashes, int64_t num_candidates,
                                                 int64_t last_size, int64_t* per_row);

struct SidCollisionStats {
  int64_t total_items = 0;
  int64_t raw_collision_buckets = 0;    // buckets above capacity before
  int64_t final_collision_buckets = 0;  // ... and after
  int64_t relocated_count = 0;
  int64_t unresolved_count = 0;
  int64_t max_final_bucket_size = 0;
};

struct SidCollisionResult {
  std::vector<int64_t> last_codes;  // [N] final last-layer code per row
  std::vector<int64_t> slots;       // [N] final 1-based slot per row
  std::vector<int64_t> unresolved_rows;
  SidCollisionStats stats;
};

// First-fit placement of the plan's overflow rows over `candidates` ([overflow × per_row]
// last codes, row-aligned with plan.overflow_rows). Throws DataError for a candidate outside
// [0, last_size).
SidCollisionResult resolve_sid_collisions_first_fit(const SidCollisionPlan& plan, const std::vector<int64_t>& candidates,
                                                    int64_t per_row);

}  // namespace tzrec::retrieval
