// Which rank owns a raw 64-bit id when a table's ids are spread over the ranks of a job: dynamic
// tables (dynamic_table.h) and row-wise sharded zero-collision hashed tables (zch_sharding.h).
// docs/tzrec-compatibility.md §5.12, §5.13.
#pragma once

#include <cstdint>
#include <stdexcept>

#include "embedding/dynamic_admission_counter.h"

namespace tzrec::embedding {

// The rank in [0, world_size) owning `id`: floor(mix64(id XOR 0x5851F42D4C957F2D) · world_size /
// 2^64), mix64 the splitmix64 finalizer (dynamic_hash::mix64) — independent of the dynamic tables'
// bucket hash mix64(id), so one rank's ids still spread over all buckets. Patterned ids (small
// ranges, strides) are spread evenly. Stable across builds and platforms: part of the checkpoint
// contract (world_size 1 → 0).
inline int id_owner_rank(int64_t id, int world_size) {
  if (world_size < 1) throw std::invalid_argument("id_owner_rank: world_size < 1");
  constexpr uint64_t kOwnerSeed = 0x5851f42d4c957f2dULL;
  const uint64_t h = dynamic_hash::mix64(static_cast<uint64_t>(id) ^ kOwnerSeed);
  return static_cast<int>(dynamic_hash::bucket_of(h, static_cast<uint64_t>(world_size)));
}

}  // namespace tzrec::embedding
