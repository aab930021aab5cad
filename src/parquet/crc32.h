// CRC-32 of the zlib / IEEE 802.3 polynomial (reflected 0xEDB88320), the checksum of Parquet page
// headers (`PageHeader.crc`). zlib's crc32 computes it; on x86-64 CPUs with carry-less
// multiplication (PCLMULQDQ, chosen once at run time) the bulk of a buffer is folded 64 bytes at
// a time instead (Gopal et al., "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ
// Instruction", Intel 2009), several times faster than zlib's table-driven loop; the result is
// the same value.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tzrec::parquet {

// CRC-32 of data[0, size), as zlib's crc32(crc32(0, NULL, 0), data, size).
uint32_t crc32(const uint8_t* data, size_t size);

// The two implementations behind crc32(), for tests: zlib alone, and the folding one (valid only
// when crc32_folding_available(); it hands sizes below 64 bytes and the last size % 16 bytes to
// zlib).
uint32_t crc32_zlib(const uint8_t* data, size_t size);
bool crc32_folding_available();
uint32_t crc32_folding(const uint8_t* data, size_t size);

}  // namespace tzrec::parquet
