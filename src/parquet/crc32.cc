#include "parquet/crc32.h"

#include <algorithm>
#include <climits>

#include <zlib.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TZREC_CRC32_FOLDING 1
#include <immintrin.h>
#endif

namespace tzrec::parquet {
namespace {

// zlib's crc32 continued from `crc` (a finished CRC value) over data[0, size), in chunks its
// uInt length can hold.
uint32_t zlib_extend(uint32_t crc, const uint8_t* data, size_t size) {
  uLong c = crc;
  while (size > 0) {
    const uInt chunk = static_cast<uInt>(std::min<size_t>(size, UINT_MAX));
    c = ::crc32(c, data, chunk);
    data += chunk;
    size -= chunk;
  }
  return static_cast<uint32_t>(c);
}

#ifdef TZREC_CRC32_FOLDING
// Folding constants of the reflected polynomial P = 0x1DB710641 (x^32 + ... + 1, bit-reversed):
// k1 = x^(4*128+32) mod P and k2 = x^(4*128-32) mod P fold 512 bits ahead, k3 = x^(128+32) and
// k4 = x^(128-32) mod P fold 128 bits, k5 = x^64 mod P folds 64 bits, mu = floor(x^64 / P) for
// the Barrett reduction (all bit-reflected, with the extra shift of the reflected domain).
constexpr int64_t kK1 = 0x0154442bd4, kK2 = 0x01c6e41596;
constexpr int64_t kK3 = 0x01751997d0, kK4 = 0x00ccaa009e;
constexpr int64_t kK5 = 0x0163cd6124;
constexpr int64_t kP = 0x01db710641, kMu = 0x01f7011641;

// x * k: the carry-less products of x's low half with k's low half and of x's high half with
// k's high half, added (xor) — x folded forward by the distance k encodes.
__attribute__((target("pclmul,sse4.1"))) inline __m128i fold(__m128i x, __m128i k) {
  return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

// The CRC register (zlib's internal, inverted form) after data[0, size); size >= 64 and a multiple
// of 16.
__attribute__((target("pclmul,sse4.1"))) uint32_t fold_register(uint32_t reg, const uint8_t* p, size_t size) {
  const auto load = [](const uint8_t* q) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q)); };
  const __m128i k1k2 = _mm_set_epi64x(kK2, kK1);
  const __m128i k3k4 = _mm_set_epi64x(kK4, kK3);
  const __m128i k5 = _mm_set_epi64x(0, kK5);
  const __m128i p_mu = _mm_set_epi64x(kMu, kP);
  // Four 128-bit lanes over the first 64 bytes, the register added into the first.
  __m128i x0 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(reg)));
  __m128i x1 = load(p + 16), x2 = load(p + 32), x3 = load(p + 48);
  p += 64;
  size -= 64;
  for (; size >= 64; p += 64, size -= 64) {  // each lane folded 512 bits on, onto the next block
    x0 = _mm_xor_si128(fold(x0, k1k2), load(p));
    x1 = _mm_xor_si128(fold(x1, k1k2), load(p + 16));
    x2 = _mm_xor_si128(fold(x2, k1k2), load(p + 32));
    x3 = _mm_xor_si128(fold(x3, k1k2), load(p + 48));
  }
  // The four lanes into one, then the remaining 16-byte blocks.
  x0 = _mm_xor_si128(fold(x0, k3k4), x1);
  x0 = _mm_xor_si128(fold(x0, k3k4), x2);
  x0 = _mm_xor_si128(fold(x0, k3k4), x3);
  for (; size >= 16; p += 16, size -= 16) x0 = _mm_xor_si128(fold(x0, k3k4), load(p));
  // 128 bits to 64, then to 32 (the register's 64 + 32 bits), then the Barrett reduction.
  const __m128i low32 = _mm_setr_epi32(-1, 0, -1, 0);
  __m128i x = _mm_xor_si128(_mm_srli_si128(x0, 8), _mm_clmulepi64_si128(x0, k3k4, 0x10));
  x = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x, low32), k5, 0x00), _mm_srli_si128(x, 4));
  __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x, low32), p_mu, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, low32), p_mu, 0x00);
  return static_cast<uint32_t>(_mm_extract_epi32(_mm_xor_si128(x, t), 1));
}
#endif

using Crc32Fn = uint32_t (*)(const uint8_t*, size_t);

Crc32Fn choose() { return crc32_folding_available() ? &crc32_folding : &crc32_zlib; }

}  // namespace

uint32_t crc32_zlib(const uint8_t* data, size_t size) {
  return zlib_extend(static_cast<uint32_t>(::crc32(0L, Z_NULL, 0)), data, size);
}

bool crc32_folding_available() {
#ifdef TZREC_CRC32_FOLDING
  static const bool available = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  return available;
#else
  return false;
#endif
}

uint32_t crc32_folding(const uint8_t* data, size_t size) {
#ifdef TZREC_CRC32_FOLDING
  if (size >= 64 && crc32_folding_available()) {
    const size_t bulk = size - size % 16;
    const uint32_t crc = ~fold_register(~uint32_t{0}, data, bulk);  // zlib starts from ~0
    return zlib_extend(crc, data + bulk, size - bulk);
  }
#endif
  return crc32_zlib(data, size);
}

uint32_t crc32(const uint8_t* data, size_t size) {
  static const Crc32Fn fn = choose();
  return fn(data, size);
}

}  // namespace tzrec::parquet
