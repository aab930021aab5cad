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

}  // namespace stable_hash_test
}  // namespace tzrec
