#include "feature/hash.h"

#include <cctype>
#include <cstdlib>
#include <string>
#include <utility>

namespace tzrec::feature {
namespace {

using hash_detail::load32;
using hash_detail::load64;
using hash_detail::shift_mix;

inline uint64_t rotr(uint64_t v, int s) { return s == 0 ? v : (v >> s) | (v << (64 - s)); }

// ---- farmhash (na variant), constants from the published algorithm ----
constexpr uint64_t kK0 = 0xc3a5c85c97cb3127ULL;
constexpr uint64_t kK1 = 0xb492b66fbe98f273ULL;
constexpr uint64_t kK2 = 0x9ae16a3b2f90404fULL;

inline uint64_t hash_len16(uint64_t u, uint64_t v, uint64_t mul) {
  uint64_t a = (u ^ v) * mul;
  a ^= a >> 47;
  uint64_t b = (v ^ a) * mul;
  b ^= b >> 47;
  return b * mul;
}

uint64_t farm_len0to16(const unsigned char* s, size_t len) {
  if (len >= 8) {
    const uint64_t mul = kK2 + len * 2;
    const uint64_t a = load64(s) + kK2;
    const uint64_t b = load64(s + len - 8);
    const uint64_t c = rotr(b, 37) * mul + a;
    const uint64_t d = (rotr(a, 25) + b) * mul;
    return hash_len16(c, d, mul);
  }
  if (len >= 4) {
    const uint64_t mul = kK2 + len * 2;
    const uint64_t a = load32(s);
    return hash_len16(len + (a << 3), load32(s + len - 4), mul);
  }
  if (len > 0) {
    const uint8_t a = s[0];
    const uint8_t b = s[len >> 1];
    const uint8_t c = s[len - 1];
    const uint32_t y = static_cast<uint32_t>(a) + (static_cast<uint32_t>(b) << 8);
    const uint32_t z = static_cast<uint32_t>(len) + (static_cast<uint32_t>(c) << 2);
    return shift_mix(y * kK2 ^ z * kK0) * kK2;
  }
  return kK2;
}

uint64_t farm_len17to32(const unsigned char* s, size_t len) {
  const uint64_t mul = kK2 + len * 2;
  const uint64_t a = load64(s) * kK1;
  const uint64_t b = load64(s + 8);
  const uint64_t c = load64(s + len - 8) * mul;
  const uint64_t d = load64(s + len - 16) * kK2;
  return hash_len16(rotr(a + b, 43) + rotr(c, 30) + d, a + rotr(b + kK2, 18) + c, mul);
}

uint64_t farm_len33to64(const unsigned char* s, size_t len) {
  const uint64_t mul = kK2 + len * 2;
  const uint64_t a = load64(s) * kK2;
  const uint64_t b = load64(s + 8);
  const uint64_t c = load64(s + len - 8) * mul;
  const uint64_t d = load64(s + len - 16) * kK2;
  const uint64_t y = rotr(a + b, 43) + rotr(c, 30) + d;
  const uint64_t z = hash_len16(y, a + rotr(b + kK2, 18) + c, mul);
  const uint64_t e = load64(s + 16) * mul;
  const uint64_t f = load64(s + 24);
  const uint64_t g = (y + load64(s + len - 32)) * mul;
  const uint64_t h = (z + load64(s + len - 24)) * mul;
  return hash_len16(rotr(e + f, 43) + rotr(g, 30) + h, e + rotr(f + a, 18) + g, mul);
}

struct U128 {
  uint64_t first;
  uint64_t second;
};

// 32 bytes of s mixed into the seeds a, b.
inline U128 weak_hash32(const unsigned char* s, uint64_t a, uint64_t b) {
  const uint64_t w = load64(s);
  const uint64_t x = load64(s + 8);
  const uint64_t y = load64(s + 16);
  const uint64_t z = load64(s + 24);
  a += w;
  b = rotr(b + a + z, 21);
  const uint64_t c = a;
  a += x;
  a += y;
  b += rotr(a, 44);
  return U128{a + z, b + c};
}

uint64_t farm_hash64(const unsigned char* s, size_t len) {
  constexpr uint64_t kSeed = 81;
  if (len <= 16) return farm_len0to16(s, len);
  if (len <= 32) return farm_len17to32(s, len);
  if (len <= 64) return farm_len33to64(s, len);
  // 56 bytes of state (x, y, z, v, w) over 64-byte chunks; the last chunk ends at the input end.
  uint64_t x = kSeed;
  uint64_t y = kSeed * kK1 + 113;
  uint64_t z = shift_mix(y * kK2 + 113) * kK2;
  U128 v{0, 0};
  U128 w{0, 0};
  x = x * kK2 + load64(s);
  const unsigned char* end = s + ((len - 1) / 64) * 64;
  const unsigned char* last64 = end + ((len - 1) & 63) - 63;
  do {
    x = rotr(x + y + v.first + load64(s + 8), 37) * kK1;
    y = rotr(y + v.second + load64(s + 48), 42) * kK1;
    x ^= w.second;
    y += v.first + load64(s + 40);
    z = rotr(z + w.first, 33) * kK1;
    v = weak_hash32(s, v.second * kK1, x + w.first);
    w = weak_hash32(s + 32, z + w.second, y + load64(s + 16));
    std::swap(z, x);
    s += 64;
  } while (s != end);
  const uint64_t mul = kK1 + ((z & 0xff) << 1);
  s = last64;
  w.first += ((len - 1) & 63);
  v.first += w.first;
  w.first += v.first;
  x = rotr(x + y + v.first + load64(s + 8), 37) * mul;
  y = rotr(y + v.second + load64(s + 48), 42) * mul;
  x ^= w.second * 9;
  y += v.first * 9 + load64(s + 40);
  z = rotr(z + w.first, 33) * mul;
  v = weak_hash32(s, v.second * mul, x + w.first);
  w = weak_hash32(s + 32, z + w.second, y + load64(s + 16));
  std::swap(z, x);
  return hash_len16(hash_len16(v.first, w.first, mul) + shift_mix(y) * kK0 + z,
                    hash_len16(v.second, w.second, mul) + x, mul);
}

}  // namespace

uint64_t farm_fingerprint64(std::string_view s) {
  return farm_hash64(reinterpret_cast<const unsigned char*>(s.data()), s.size());
}

HashKind hash_kind_from_env() {
  const char* env = std::getenv("USE_FARM_HASH_TO_BUCKETIZE");
  if (env == nullptr) return HashKind::kStdHash;
  std::string v(env);
  for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return v == "true" ? HashKind::kFarmHash : HashKind::kStdHash;
}

Modulus::Modulus(uint64_t d) : d_(d) {
  // l = ceil(log2 d); multiplier = floor(2^64 (2^l - d) / d) + 1.
  int l = 0;
  while (l < 64 && (uint64_t{1} << l) < d) ++l;
  const unsigned __int128 two_l = static_cast<unsigned __int128>(1) << l;
  const unsigned __int128 two_64 = static_cast<unsigned __int128>(1) << 64;
  multiplier_ = static_cast<uint64_t>(two_64 * (two_l - d) / d + 1);
  shift1_ = l < 1 ? l : 1;
  shift2_ = l > 1 ? l - 1 : 0;
}

}  // namespace tzrec::feature
