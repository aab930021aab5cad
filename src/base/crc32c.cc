#include "base/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TZREC_CRC32C_X86 1
#include <nmmintrin.h>
#endif

namespace tzrec::crc32c {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "slice-by-8 below reads 8 bytes as one little-endian word");

constexpr uint32_t kPolynomial = 0x82F63B78u;  // reflected Castagnoli polynomial

using Tables = std::array<std::array<uint32_t, 256>, 8>;

// tables[0][b]: CRC register after shifting byte b through 8 bit steps.
// tables[k][b]: the same byte followed by k zero bytes, which lets 8 input bytes be folded with
// 8 independent look-ups (slice-by-8).
constexpr Tables make_tables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? kPolynomial : 0u);
    t[0][b] = crc;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t prev = t[k - 1][b];
      t[k][b] = (prev >> 8) ^ t[0][prev & 0xffu];
    }
  }
  return t;
}

constexpr Tables kTables = make_tables();

#ifdef TZREC_CRC32C_X86
__attribute__((target("sse4.2"))) uint32_t extend_sse42(uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t reg = ~crc;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    reg = _mm_crc32_u64(reg, word);
    p += 8;
    n -= 8;
  }
  auto reg32 = static_cast<uint32_t>(reg);
  while (n > 0) {
    reg32 = _mm_crc32_u8(reg32, *p++);
    --n;
  }
  return ~reg32;
}
#endif

using ExtendFn = uint32_t (*)(uint32_t, const void*, size_t);

ExtendFn choose_extend() {
#ifdef TZREC_CRC32C_X86
  if (hardware_available()) return &extend_sse42;
#endif
  return &extend_software;
}

}  // namespace

uint32_t extend_software(uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t reg = ~crc;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    word ^= reg;  // the register lines up with the first (lowest) 4 bytes
    reg = kTables[7][word & 0xff] ^ kTables[6][(word >> 8) & 0xff] ^
          kTables[5][(word >> 16) & 0xff] ^ kTables[4][(word >> 24) & 0xff] ^
          kTables[3][(word >> 32) & 0xff] ^ kTables[2][(word >> 40) & 0xff] ^
          kTables[1][(word >> 48) & 0xff] ^ kTables[0][word >> 56];
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    reg = (reg >> 8) ^ kTables[0][(reg ^ *p++) & 0xffu];
    --n;
  }
  return ~reg;
}

bool hardware_available() {
#ifdef TZREC_CRC32C_X86
  static const bool available = __builtin_cpu_supports("sse4.2");
  return available;
#else
  return false;
#endif
}

uint32_t extend_hardware(uint32_t crc, const void* data, size_t n) {
#ifdef TZREC_CRC32C_X86
  if (hardware_available()) return extend_sse42(crc, data, n);
#endif
  // Reaching here is a caller bug (see header); fall back rather than execute an illegal
  // instruction.
  return extend_software(crc, data, n);
}

uint32_t extend(uint32_t crc, const void* data, size_t n) {
  static const ExtendFn fn = choose_extend();
  return fn(crc, data, n);
}

}  // namespace tzrec::crc32c
