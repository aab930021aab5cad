#include "base/crc32c.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tzrec::crc32c {
namespace crc32c_test {

// Bit-at-a-time reference: the textbook definition, sharing no tables with the implementation.
uint32_t bitwise_crc32c(const std::vector<uint8_t>& bytes) {
  uint32_t reg = 0xffffffffu;
  for (uint8_t b : bytes) {
    reg ^= b;
    for (int i = 0; i < 8; ++i) reg = (reg >> 1) ^ ((reg & 1u) ? 0x82F63B78u : 0u);
  }
  return reg ^ 0xffffffffu;
}

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> out(n);
  for (auto& b : out) b = static_cast<uint8_t>(rng());
  return out;
}

TEST(Crc32c, StandardCheckValue) {
  EXPECT_EQ(value(std::string_view("123456789")), 0xE3069283u);
  EXPECT_EQ(extend_software(0, "123456789", 9), 0xE3069283u);
}

TEST(Crc32c, EmptyInputIsZero) {
  EXPECT_EQ(value(std::string_view()), 0u);
  EXPECT_EQ(extend(0x12345678u, "", 0), 0x12345678u);
}

// RFC 3720 appendix B.4 test vectors.
TEST(Crc32c, Rfc3720Vectors) {
  std::vector<uint8_t> zeros(32, 0x00);
  std::vector<uint8_t> ones(32, 0xff);
  std::vector<uint8_t> ascending(32), descending(32);
  for (int i = 0; i < 32; ++i) {
    ascending[i] = static_cast<uint8_t>(i);
    descending[i] = static_cast<uint8_t>(31 - i);
  }
  // An iSCSI SCSI Read (10) command PDU.
  std::vector<uint8_t> pdu = {
      0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
      0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  for (auto fn : {&extend, &extend_software}) {
    EXPECT_EQ(fn(0, zeros.data(), zeros.size()), 0x8A9136AAu);
    EXPECT_EQ(fn(0, ones.data(), ones.size()), 0x62A8AB43u);
    EXPECT_EQ(fn(0, ascending.data(), ascending.size()), 0x46DD794Eu);
    EXPECT_EQ(fn(0, descending.data(), descending.size()), 0x113FDB5Cu);
    EXPECT_EQ(fn(0, pdu.data(), pdu.size()), 0xD9963A56u);
  }
}

// Every length 0..200 and every start offset 0..7 (exercises the 8-byte loop, the tail loop and
// unaligned loads) against the bitwise reference, for both implementations.
TEST(Crc32c, MatchesBitwiseReferenceAtAllLengthsAndOffsets) {
  std::vector<uint8_t> buf = random_bytes(208, 7);
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t n = 0; n <= 200; ++n) {
      std::vector<uint8_t> slice(buf.begin() + offset, buf.begin() + offset + n);
      uint32_t expected = bitwise_crc32c(slice);
      ASSERT_EQ(extend_software(0, buf.data() + offset, n), expected) << "n=" << n << " offset=" << offset;
      ASSERT_EQ(extend(0, buf.data() + offset, n), expected) << "n=" << n << " offset=" << offset;
      if (hardware_available()) {
        ASSERT_EQ(extend_hardware(0, buf.data() + offset, n), expected) << "n=" << n << " offset=" << offset;
      }
    }
  }
}

TEST(Crc32c, ExtendConcatenates) {
  std::vector<uint8_t> buf = random_bytes(1000, 11);
  uint32_t whole = value(buf.data(), buf.size());
  EXPECT_EQ(whole, bitwise_crc32c(buf));
  for (size_t split : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{333}, size_t{999}, size_t{1000}}) {
    uint32_t first = value(buf.data(), split);
    EXPECT_EQ(extend(first, buf.data() + split, buf.size() - split), whole) << "split=" << split;
    EXPECT_EQ(extend_software(extend_software(0, buf.data(), split), buf.data() + split, buf.size() - split),
              whole)
        << "split=" << split;
  }
}

TEST(Crc32c, TfRecordMask) {
  // Hand-computed: rotr(0xE3069283, 15) = 0x2507C60D; + 0xa282ead8 = 0xC78AB0E5 (mod 2^32).
  EXPECT_EQ(mask(0xE3069283u), 0xC78AB0E5u);
  EXPECT_EQ(mask(0), 0xa282ead8u);
  EXPECT_NE(mask(0xE3069283u), 0xE3069283u);
  std::mt19937 rng(3);
  for (int i = 0; i < 1000; ++i) {
    uint32_t crc = static_cast<uint32_t>(rng());
    ASSERT_EQ(unmask(mask(crc)), crc);
  }
}

}  // namespace crc32c_test
}  // namespace tzrec::crc32c
