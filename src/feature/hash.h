// Bucket hashing of string feature values, bit-identical to TorchEasyRec/pyfg
// (docs/tzrec-compatibility.md §5.4):
//   default: libstdc++ std::hash<std::string> = _Hash_bytes (a MurmurHash64A variant) with seed
//            0xc70f6907, as unsigned 64-bit, % bucket size;
//   env USE_FARM_HASH_TO_BUCKETIZE=true (case-insensitive): farmhash Fingerprint64 (as used by
//            TensorFlow's string_to_hash_bucket_fast), % bucket size.
// Both are implemented here on explicit little-endian loads, so results do not depend on the
// platform or the standard library. No torch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tzrec::feature {

enum class HashKind { kStdHash, kFarmHash };

// libstdc++'s _Hash_bytes(data, len, seed) on a 64-bit target.
uint64_t murmur_hash_bytes(const void* data, size_t len, uint64_t seed);
// std::hash<std::string> of libstdc++ (seed 0xc70f6907).
uint64_t std_string_hash(std::string_view s);
// farmhash::Fingerprint64 (farmhashna::Hash64).
uint64_t farm_fingerprint64(std::string_view s);

// kFarmHash when env USE_FARM_HASH_TO_BUCKETIZE is "true" (any case), else kStdHash.
HashKind hash_kind_from_env();

uint64_t hash_string(std::string_view s, HashKind kind);
// hash_string(s) % bucket_size; bucket_size must be > 0.
inline int64_t hash_bucket(std::string_view s, uint64_t bucket_size, HashKind kind) {
  return static_cast<int64_t>(hash_string(s, kind) % bucket_size);
}

}  // namespace tzrec::feature
