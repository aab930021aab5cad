// base/stable_hash.h against published values: FNV-1a 64 test vectors (the FNV authors' list:
// "" → cbf29ce484222325, "a" → af63dc4c8601ec8c, "foobar" → 85944171f73967e8) and the first words
// of splitmix64 seeded with 0 (Vigna's reference splitmix64.c: e220a8397b1dcdaf, 6e789e6aa1b965f4).
#include "base/stable_hash.h"

#include <gtest/gtest.h>

namespace tzrec {
namespace stable_hash_test {

TEST(StableHash, Fnv1a64TestVectors) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ULL);
}

TEST(StableHash, Splitmix64Sequence) {
  EXPECT_EQ(splitmix64(0), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(splitmix64(kGolden64), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(mix64(kGolden64), splitmix64(0));
}

TEST(StableHash, ChainSeedFoldsSplitmix64OverTheWords) {
  EXPECT_EQ(chain_seed(42, {}), 42u);
  EXPECT_EQ(chain_seed(42, {7}), splitmix64(42 ^ 7));
  EXPECT_EQ(chain_seed(42, {7, 9, 11}), splitmix64(splitmix64(splitmix64(42 ^ 7) ^ 9) ^ 11));
  EXPECT_EQ(chain_seed(chain_seed(42, {7, 9}), {11}), chain_seed(42, {7, 9, 11}));
}

// Hand computed: the top 53 bits k give k · 2^-53, or (k + 0.5) · 2^-53 for the open interval
// (rounded to a double).
TEST(StableHash, UnitDoublesFromTheTop53Bits) {
  EXPECT_EQ(unit_from_bits(0), 0.0);
  EXPECT_EQ(unit_from_bits(0x7ffULL), 0.0);  // the low 11 bits do not count
  EXPECT_EQ(unit_from_bits(1ULL << 63), 0.5);
  EXPECT_EQ(unit_from_bits(~0ULL), 1.0 - 0x1.0p-53);
  EXPECT_EQ(open_unit_from_bits(0), 0x1.0p-54);
  EXPECT_EQ(open_unit_from_bits(1ULL << 63), 0.5 + 0x1.0p-54);
  EXPECT_EQ(open_unit_from_bits(~0ULL), 1.0 - 0x1.0p-53);  // (2^53 − 1) + 0.5 rounds to 2^53
  EXPECT_EQ(open_unit_from_bits(~0ULL << 12), 1.0 - 0x1.0p-52);  // 2^53 − 2 + 0.5 rounds to even
}

}  // namespace stable_hash_test
}  // namespace tzrec
