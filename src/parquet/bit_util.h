// Bit and byte helpers for the Parquet encodings (header-only; hot loops inline them).
// Parquet data is little-endian; we build for little-endian hosts only (checked below).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "parquet/errors.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "tzrec::parquet assumes a little-endian host");

namespace tzrec::parquet::bits {

inline uint64_t load_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline uint64_t mask(int bit_width) { return bit_width >= 64 ? ~uint64_t{0} : (uint64_t{1} << bit_width) - 1; }

// Unsigned LEB128 varint at *pos (< end); advances *pos. Throws DecodeError when truncated.
inline uint64_t read_uleb(const uint8_t** pos, const uint8_t* end) {
  uint64_t result = 0;
  const uint8_t* p = *pos;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p >= end) throw_decode_error("varint runs past the end of the data");
    uint8_t b = *p++;
    result |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *pos = p;
      return result;
    }
  }
  throw_decode_error("varint longer than 10 bytes");
}

inline int64_t read_zigzag(const uint8_t** pos, const uint8_t* end) {
  uint64_t v = read_uleb(pos, end);
  return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
}

// Extracts `count` values of `bit_width` bits (LSB-first packing, as the RLE/bit-packed hybrid
// and DELTA_BINARY_PACKED use) starting at bit `start_bit` of `in`. The caller guarantees that
// `in` holds every bit read; `in_size` is the bytes actually readable from `in` (the fast path
// reads whole 8-byte words while they stay inside).
template <typename T>
inline void unpack_bits(const uint8_t* in, size_t in_size, uint64_t start_bit, int bit_width, T* out,
                        int64_t count) {
  if (bit_width == 0) {
    for (int64_t i = 0; i < count; ++i) out[i] = 0;
    return;
  }
  const uint64_t m = mask(bit_width);
  int64_t i = 0;
  if (bit_width == 1 && (start_bit & 7) == 0) {
    // Definition levels of optional flat columns: eight values per byte.
    const uint8_t* p = in + (start_bit >> 3);
    for (; i + 8 <= count; i += 8) {
      const uint8_t b = *p++;
      for (int k = 0; k < 8; ++k) out[i + k] = static_cast<T>((b >> k) & 1);
    }
    for (; i < count; ++i) {
      uint64_t bit = start_bit + static_cast<uint64_t>(i);
      out[i] = static_cast<T>((in[bit >> 3] >> (bit & 7)) & 1);
    }
    return;
  }
  if (bit_width <= 56) {
    // Each value lies within the 8 bytes starting at its first byte.
    uint64_t bit = start_bit;
    for (; i < count; ++i, bit += bit_width) {
      size_t byte = bit >> 3;
      if (byte + 8 > in_size) break;
      out[i] = static_cast<T>((load_u64(in + byte) >> (bit & 7)) & m);
    }
  }
  // Tail (and widths > 56): byte by byte.
  for (; i < count; ++i) {
    uint64_t bit = start_bit + static_cast<uint64_t>(i) * bit_width;
    uint64_t v = 0;
    int got = 0;
    size_t byte = bit >> 3;
    int shift = static_cast<int>(bit & 7);
    while (got < bit_width) {
      uint64_t b = static_cast<uint64_t>(in[byte++]) >> shift;
      v |= b << got;
      got += 8 - shift;
      shift = 0;
    }
    out[i] = static_cast<T>(v & m);
  }
}

// Copies n bytes (n may be 0, and then the pointers may be null). Short byte arrays, the common
// case of string columns, are copied inline instead of through a memcpy call.
inline void copy_bytes(void* dst_ptr, const void* src_ptr, size_t n) {
  auto* dst = static_cast<uint8_t*>(dst_ptr);
  const auto* src = static_cast<const uint8_t*>(src_ptr);
  if (n <= 16) {
    if (n >= 8) {
      uint64_t a, b;
      std::memcpy(&a, src, 8);
      std::memcpy(&b, src + n - 8, 8);
      std::memcpy(dst, &a, 8);
      std::memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4) {
      uint32_t a, b;
      std::memcpy(&a, src, 4);
      std::memcpy(&b, src + n - 4, 4);
      std::memcpy(dst, &a, 4);
      std::memcpy(dst + n - 4, &b, 4);
    } else if (n > 0) {
      dst[0] = src[0];
      dst[n / 2] = src[n / 2];
      dst[n - 1] = src[n - 1];
    }
    return;
  }
  std::memcpy(dst, src, n);
}

// Number of bits needed for v (0 for 0).
inline int bit_width_of(uint64_t v) { return v == 0 ? 0 : 64 - __builtin_clzll(v); }

}  // namespace tzrec::parquet::bits
