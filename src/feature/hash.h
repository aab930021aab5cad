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
#include <cstring>
#include <string_view>

namespace tzrec::feature {

enum class HashKind { kStdHash, kFarmHash };

// Little-endian loads and the mixing step the hashes share.
namespace hash_detail {

// One unaligned load, byte-swapped on big-endian targets (a byte loop assembling the same value
// stays a loop of byte loads in the compiled code).
inline uint64_t load64(const unsigned char* p) {
  uint64_t v = 0;
  std::memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

inline uint32_t load32(const unsigned char* p) {
  uint32_t v = 0;
  std::memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  return v;
}

inline uint64_t shift_mix(uint64_t v) { return v ^ (v >> 47); }

// MurmurHash64A's multiplier, and the seed of libstdc++'s std::hash<std::string>.
constexpr uint64_t kMurmurMul = (0xc6a4a793ULL << 32) + 0x5bd1e995ULL;
constexpr uint64_t kStdHashSeed = 0xc70f6907ULL;

// MurmurHash64A's steps: the state before the data (the seed mixed with the length), taking in a
// word (an 8-byte block, premixed, or the trailing bytes), and the final mix.
inline uint64_t murmur_start(uint64_t seed, size_t len) { return seed ^ (len * kMurmurMul); }
inline uint64_t murmur_take(uint64_t h, uint64_t word) { return (h ^ word) * kMurmurMul; }
inline uint64_t murmur_finish(uint64_t h) { return shift_mix(shift_mix(h) * kMurmurMul); }

}  // namespace hash_detail

// libstdc++'s _Hash_bytes(data, len, seed) on a 64-bit target. Inline: sequences hash hundreds of
// short ids per row.
inline uint64_t murmur_hash_bytes(const void* data, size_t len, uint64_t seed) {
  using namespace hash_detail;
  const auto* p = static_cast<const unsigned char*>(data);
  const size_t aligned = len & ~static_cast<size_t>(7);
  uint64_t h = murmur_start(seed, len);
  for (size_t i = 0; i < aligned; i += 8) h = murmur_take(h, shift_mix(load64(p + i) * kMurmurMul) * kMurmurMul);
  const size_t tail = len & 7;
  if (tail != 0) {
    // The trailing bytes as a little-endian integer (last byte most significant), assembled from
    // overlapping loads inside them (overlapping bytes land on the same bits): no byte loop, whose
    // exit mispredicts on the short values that ids mostly are.
    const unsigned char* t = p + aligned;
    uint64_t d = 0;
    if (tail >= 4) {
      const uint64_t high = load32(t + tail - 4);
      d = load32(t) | (high << (8 * (tail - 4)));
    } else {
      d = t[0] | (static_cast<uint64_t>(t[tail / 2]) << (8 * (tail / 2))) |
          (static_cast<uint64_t>(t[tail - 1]) << (8 * (tail - 1)));
    }
    h = murmur_take(h, d);
  }
  return murmur_finish(h);
}

// std::hash<std::string> of libstdc++ (seed 0xc70f6907).
inline uint64_t std_string_hash(std::string_view s) {
  return murmur_hash_bytes(s.data(), s.size(), hash_detail::kStdHashSeed);
}
// std_string_hash(s) for an s inside a larger text that may be read up to `readable_end` (>= the
// end of s): a short s (under 8 bytes) with 8 readable bytes from its start is read in one load,
// the bytes past it masked off — no branch on its length, which mispredicts on ids of mixed
// lengths (the tokens of a sequence cell). Anything else goes the way of std_string_hash.
inline uint64_t std_string_hash_in(std::string_view s, const char* readable_end) {
  const size_t len = s.size();
  if (len == 0 || len >= 8 || readable_end - s.data() < 8) return std_string_hash(s);
  using namespace hash_detail;
  // As murmur_hash_bytes with the std::hash seed: no 8-byte block, the tail is the whole of s.
  const uint64_t word = load64(reinterpret_cast<const unsigned char*>(s.data()));
  return murmur_finish(murmur_take(murmur_start(kStdHashSeed, len), word & (~uint64_t{0} >> (64 - 8 * len))));
}

// farmhash::Fingerprint64 (farmhashna::Hash64).
uint64_t farm_fingerprint64(std::string_view s);

// kFarmHash when env USE_FARM_HASH_TO_BUCKETIZE is "true" (any case), else kStdHash.
HashKind hash_kind_from_env();

inline uint64_t hash_string(std::string_view s, HashKind kind) {
  return kind == HashKind::kFarmHash ? farm_fingerprint64(s) : std_string_hash(s);
}
// hash_string(s, kind) for an s inside a text readable up to `readable_end` (std_string_hash_in).
inline uint64_t hash_string_in(std::string_view s, const char* readable_end, HashKind kind) {
  return kind == HashKind::kFarmHash ? farm_fingerprint64(s) : std_string_hash_in(s, readable_end);
}
// hash_string(s) % bucket_size; bucket_size must be > 0.
inline int64_t hash_bucket(std::string_view s, uint64_t bucket_size, HashKind kind) {
  return static_cast<int64_t>(hash_string(s, kind) % bucket_size);
}

// x % d for a divisor d > 0 known ahead (a hash_bucket_size): a multiplication and shifts
// instead of a 64-bit division, whose latency dominated hashing short ids. Exact for every x
// (Granlund & Montgomery, "Division by Invariant Integers using Multiplication", 1994, fig. 4.1).
class Modulus {
 public:
  explicit Modulus(uint64_t d = 1);
  uint64_t of(uint64_t x) const {
    const auto t = static_cast<uint64_t>((static_cast<unsigned __int128>(multiplier_) * x) >> 64);
    const uint64_t q = (t + ((x - t) >> shift1_)) >> shift2_;
    return x - q * d_;
  }
  uint64_t divisor() const { return d_; }

 private:
  uint64_t d_;
  uint64_t multiplier_;
  int shift1_;
  int shift2_;
};

// hash_bucket() by a precomputed bucket count.
inline int64_t hash_bucket(std::string_view s, const Modulus& buckets, HashKind kind) {
  return static_cast<int64_t>(buckets.of(hash_string(s, kind)));
}

// hash_bucket(s, buckets, kind) for an s inside a text readable up to `readable_end`
// (hash_string_in).
inline int64_t hash_bucket_in(std::string_view s, const char* readable_end, const Modulus& buckets, HashKind kind) {
  return static_cast<int64_t>(buckets.of(hash_string_in(s, readable_end, kind)));
}

}  // namespace tzrec::feature
