// CRC-32 of Parquet page headers. Expected values: the CRC-32 check value of "123456789"
// (0xCBF43926, the catalogue value of CRC-32/ISO-HDLC), a bit-at-a-time CRC written from the
// polynomial's definition, and zlib's crc32 — the folding implementation must agree with both on
// every length (the 64-byte bulk, the 16-byte blocks after it, the tail zlib finishes) and at
// every alignment.
#include "parquet/crc32.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace tzrec::parquet {
namespace crc32_test {

// Reflected CRC-32, one bit at a time: register ~0, polynomial 0xEDB88320, result inverted.
uint32_t bitwise_crc32(const uint8_t* data, size_t size) {
  uint32_t reg = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) {
    reg ^= data[i];
    for (int bit = 0; bit < 8; ++bit) reg = (reg >> 1) ^ ((reg & 1u) ? 0xEDB88320u : 0u);
  }
  return ~reg;
}

std::vector<uint8_t> random_bytes(size_t n) {
  std::mt19937 rng(17);
  std::vector<uint8_t> out(n);
  for (auto& b : out) b = static_cast<uint8_t>(rng());
  return out;
}

TEST(Crc32, CheckValue) {
  const std::string s = "123456789";
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  EXPECT_EQ(crc32(p, s.size()), 0xCBF43926u);
  EXPECT_EQ(crc32_zlib(p, s.size()), 0xCBF43926u);
  EXPECT_EQ(crc32_folding(p, s.size()), 0xCBF43926u);
  EXPECT_EQ(crc32(p, 0), 0u);
  // 64 copies of the check string: long enough for the folding loop.
  std::string long_text;
  for (int i = 0; i < 64; ++i) long_text += s;
  const auto* q = reinterpret_cast<const uint8_t*>(long_text.data());
  EXPECT_EQ(crc32(q, long_text.size()), bitwise_crc32(q, long_text.size()));
}

TEST(Crc32, FoldingAgreesAtEveryLengthAndAlignment) {
  if (!crc32_folding_available()) GTEST_SKIP() << "no PCLMULQDQ on this CPU (crc32 uses zlib alone)";
  const std::vector<uint8_t> bytes = random_bytes((1 << 20) + 64);
  for (size_t offset = 0; offset < 4; ++offset) {
    for (size_t n = 0; n <= 400; ++n) {
      const uint8_t* p = bytes.data() + offset;
      ASSERT_EQ(crc32_folding(p, n), bitwise_crc32(p, n)) << "length " << n << " offset " << offset;
      ASSERT_EQ(crc32(p, n), crc32_zlib(p, n)) << "length " << n << " offset " << offset;
    }
  }
  for (size_t n : {size_t{4096}, size_t{4097}, size_t{65536 + 13}, size_t{1} << 20}) {
    const uint8_t* p = bytes.data() + 3;
    EXPECT_EQ(crc32_folding(p, n), crc32_zlib(p, n)) << "length " << n;
  }
  EXPECT_EQ(crc32_folding(bytes.data(), 1 << 20), bitwise_crc32(bytes.data(), 1 << 20));
}

}  // namespace crc32_test
}  // namespace tzrec::parquet
