// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as used by TFRecord / TensorBoard event
// files, iSCSI (RFC 3720), ext4 and LevelDB. Software slice-by-8, plus the SSE4.2 `crc32`
// instruction on x86-64 CPUs that have it (chosen once at run time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tzrec::crc32c {

// CRC-32C of data[0, n). extend(value(a), b) == value(a + b); value of no bytes is 0.
uint32_t extend(uint32_t crc, const void* data, size_t n);
inline uint32_t value(const void* data, size_t n) { return extend(0, data, n); }
inline uint32_t value(std::string_view s) { return extend(0, s.data(), s.size()); }

// TFRecord masking: a CRC stored next to the data it covers is masked so that computing the
// CRC of a string that itself contains CRCs stays well distributed.
inline uint32_t mask(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}
inline uint32_t unmask(uint32_t masked) {
  uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

// The two implementations behind extend(), exposed so that tests can compare them.
uint32_t extend_software(uint32_t crc, const void* data, size_t n);
// True when this CPU has a hardware CRC-32C instruction that extend() uses.
bool hardware_available();
// Only valid when hardware_available().
uint32_t extend_hardware(uint32_t crc, const void* data, size_t n);

}  // namespace tzrec::crc32c
