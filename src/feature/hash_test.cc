#include "feature/hash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace tzrec::feature {
namespace hash_test {

TEST(Hash, StdHashBucketVectorsFromTorchEasyRec) {
  const std::pair<const char*, int64_t> cases[] = {{"abc", 33}, {"efg", 44}, {"hij", 66},
                                                   {"xyz", 13}, {"1", 95},   {"2", 70},
                                                   {"3", 13},   {"4", 56},   {"0", 26}};
  for (const auto& [s, bucket] : cases) {
    EXPECT_EQ(hash_bucket(s, 100, HashKind::kStdHash), bucket) << s;
  }
}

TEST(Hash, FarmHashBucketVectorsFromTorchEasyRec) {
  EXPECT_EQ(hash_bucket("1", 100, HashKind::kFarmHash), 49);
  EXPECT_EQ(hash_bucket("2", 100, HashKind::kFarmHash), 59);
  EXPECT_EQ(hash_bucket("3", 100, HashKind::kFarmHash), 21);
}

TEST(Hash, MurmurEqualsLibstdcxxStdHashOnRandomStrings) {
  std::mt19937_64 rng(20240611);
  std::hash<std::string> reference;
  for (int i = 0; i < 20000; ++i) {
    const size_t len = i < 300 ? static_cast<size_t>(i) : rng() % 2000;
    std::string s(len, '\0');
    for (auto& c : s) c = static_cast<char>(rng() & 0xff);
    ASSERT_EQ(std_string_hash(s), static_cast<uint64_t>(reference(s))) << "length " << len;
  }
  // Different seed, through the raw entry point.
  const std::string s = "tzrec";
  EXPECT_NE(murmur_hash_bytes(s.data(), s.size(), 1), std_string_hash(s));
}

// std_string_hash_in reads a short string's bytes with those after it (up to the readable end) and
// masks them off: it must give std_string_hash whatever those bytes are and wherever the readable
// end is (at the string's end, a few bytes after, far after).
TEST(Hash, HashInALargerTextEqualsTheStringsOwnHash) {
  std::mt19937_64 rng(20261206);
  std::hash<std::string> reference;
  std::string text(64, '\0');
  for (int i = 0; i < 200000; ++i) {
    for (auto& c : text) c = static_cast<char>(rng() & 0xff);
    const size_t len = rng() % 12;
    const size_t start = rng() % (text.size() - len + 1);
    const std::string_view s(text.data() + start, len);
    const size_t readable = start + len + rng() % (text.size() - start - len + 1);
    const uint64_t want = static_cast<uint64_t>(reference(std::string(s)));
    ASSERT_EQ(std_string_hash_in(s, text.data() + readable), want) << "length " << len << " readable " << readable;
    const Modulus buckets(1000003);
    ASSERT_EQ(hash_bucket_in(s, text.data() + readable, buckets, HashKind::kStdHash),
              static_cast<int64_t>(want % 1000003));
    ASSERT_EQ(hash_bucket_in(s, text.data() + readable, buckets, HashKind::kFarmHash),
              hash_bucket(s, buckets, HashKind::kFarmHash));
  }
}

TEST(Hash, ModulusEqualsDivisionRemainder) {
  std::mt19937_64 rng(7);
  const uint64_t two_63 = uint64_t{1} << 63;
  std::vector<uint64_t> divisors = {1, 2, 3, 7, 10, 100, 1000, 1000000, (uint64_t{1} << 32) + 1,
                                    two_63 - 1, two_63, two_63 + 1, ~uint64_t{0}};
  for (int i = 0; i < 2000; ++i) divisors.push_back(std::max<uint64_t>(1, rng() >> (rng() % 64)));
  for (const uint64_t d : divisors) {
    const Modulus m(d);
    const uint64_t max = ~uint64_t{0};
    for (const uint64_t x : {uint64_t{0}, uint64_t{1}, d - 1, d, d + 1, max - 1, max}) {
      ASSERT_EQ(m.of(x), x % d) << x << " % " << d;
    }
    for (int k = 0; k < 200; ++k) {
      const uint64_t x = rng() >> (rng() % 64);
      ASSERT_EQ(m.of(x), x % d) << x << " % " << d;
    }
  }
  EXPECT_EQ(hash_bucket("abc", Modulus(100), HashKind::kStdHash), 33);
}

// Fingerprint64 of deterministic byte strings, computed with Google's C++ farmhash as packaged by
// Debian (libfarmhash-dev, util::Fingerprint64) as an independent reference. Covers every length
// branch (0-16, 17-32, 33-64, 65+ with one and several 64-byte chunks, multiples of 64).
// (The npm package farmhash-modern agrees everywhere except at lengths 128, 192, 256, ...)
struct FarmVector {
  size_t len;
  uint64_t fingerprint;
};
const FarmVector kFarmVectors[] = {{0, 0x9ae16a3b2f90404fULL},
                                   {1, 0x600b0e181d5b7fa7ULL},
                                   {2, 0xdead23a01169a010ULL},
                                   {3, 0x1dbadcb1f801fbe5ULL},
                                   {4, 0xffa369686a92783ULL},
                                   {5, 0x3d856b03a330d6e7ULL},
                                   {6, 0x8c6ff309335a33fcULL},
                                   {7, 0x864d77f41bfda9f6ULL},
                                   {8, 0x9f847ab652d0f20bULL},
                                   {9, 0xfd42a86cc5d5c9e4ULL},
                                   {10, 0x82d586022543b992ULL},
                                   {11, 0x40f8609c6f809c00ULL},
                                   {12, 0x147f066145e5e549ULL},
                                   {13, 0x6537c23c357ada2cULL},
                                   {14, 0xdd7e42435f2c0802ULL},
                                   {15, 0x997497082e9b7d9cULL},
                                   {16, 0xa53c9ca1b299636eULL},
                                   {17, 0x9970fb88d2d8fe44ULL},
                                   {18, 0xd942ed03296dd9a3ULL},
                                   {19, 0x811cc1f08bb3878bULL},
                                   {20, 0x42e35c86999a2de7ULL},
                                   {21, 0x5989c09634ab9750ULL},
                                   {22, 0x1f6bb22dd23415b9ULL},
                                   {23, 0x4a4b62f64ffd4516ULL},
                                   {24, 0x6fcd93e595a9872fULL},
                                   {25, 0x14a9b99da4dc642fULL},
                                   {26, 0xc6541a2aa50b4798ULL},
                                   {27, 0x480d7a013c287b2cULL},
                                   {28, 0x4a9d98f083d4a42aULL},
                                   {29, 0xe0edd45c0e0778d9ULL},
                                   {30, 0x9195cd3a15094757ULL},
                                   {31, 0x864cbc79a7bc4577ULL},
                                   {32, 0x2f94b5a604e52520ULL},
                                   {33, 0xadc4d198fe3d7b56ULL},
                                   {34, 0x59ad2b9c98af50fbULL},
                                   {35, 0x6962779cbf1f45f6ULL},
                                   {36, 0x1447e5514594f530ULL},
                                   {37, 0x4252cc7abbf84b6cULL},
                                   {38, 0x6796c3e8b4748dd0ULL},
                                   {39, 0xaef7277c200496d4ULL},
                                   {40, 0x7c7fbb5809747defULL},
                                   {41, 0x4d0aa7148393e1ddULL},
                                   {42, 0xd78886dc7a03120cULL},
                                   {43, 0x4709c1a59ad2dac1ULL},
                                   {44, 0xbd40898a22e9df9ULL},
                                   {45, 0xca68e3ba940b4d7bULL},
                                   {46, 0x2916baac826cdc60ULL},
                                   {47, 0x1db7f2970181f3b2ULL},
                                   {48, 0x8b8925e4f5ceb23dULL},
                                   {49, 0x9bde6e81801fa83cULL},
                                   {50, 0x325c51355ed3fa94ULL},
                                   {51, 0x8b21e02052552354ULL},
                                   {52, 0x1579c0d98d517897ULL},
                                   {53, 0x8325c060381ea477ULL},
                                   {54, 0xb1390a88e8fd714dULL},
                                   {55, 0xebaab047d9efbce1ULL},
                                   {56, 0x4bd407d17b66c03eULL},
                                   {57, 0x4784670f323bea7ULL},
                                   {58, 0x9ec1f73155422316ULL},
                                   {59, 0x3966397c2fc05585ULL},
                                   {60, 0xd803d7cf92732445ULL},
                                   {61, 0x593b2011ab46a4a3ULL},
                                   {62, 0x6b1155edb93864faULL},
                                   {63, 0x8e5612e4297d9662ULL},
                                   {64, 0x87a8198232cd66bfULL},
                                   {65, 0x5ad4e7c2d47cec05ULL},
                                   {66, 0xf412fc14cfe5ca30ULL},
                                   {67, 0xb6a07bc59e7bab80ULL},
                                   {68, 0x79510d99f9fc8032ULL},
                                   {69, 0xa55345b9da72943aULL},
                                   {70, 0x4e48ce55efb6b639ULL},
                                   {71, 0x5d1e50644b5da1aaULL},
                                   {72, 0x784ef9fb87eda549ULL},
                                   {73, 0x1b49ac9103ed5458ULL},
                                   {74, 0x2715166327b5cce8ULL},
                                   {75, 0x38799d9edf535c53ULL},
                                   {76, 0xd4df60d26547bdd8ULL},
                                   {77, 0xda7a1804da0e3545ULL},
                                   {78, 0x9f3a1434ac7bf5d3ULL},
                                   {79, 0xc7e363b1148db36dULL},
                                   {80, 0x16a9b93f095ab634ULL},
                                   {81, 0xf8c27b80322a3088ULL},
                                   {82, 0x8b17ffcb7758f9cULL},
                                   {83, 0x1af7cbc3df58a1cdULL},
                                   {84, 0xc8be11d2a11cf218ULL},
                                   {85, 0x1776008ff9f33f08ULL},
                                   {86, 0x4502269c23cad345ULL},
                                   {87, 0xf3cc209d9b4ebb79ULL},
                                   {88, 0x43bbbd8598958214ULL},
                                   {89, 0xb9f9c979bddfcdb6ULL},
                                   {90, 0x94d31706c904d5c0ULL},
                                   {91, 0x3e749a0e8601e694ULL},
                                   {92, 0x338bd817d5ec297dULL},
                                   {93, 0x67a9776a13e5f817ULL},
                                   {94, 0xc17fa18bf3efbcbaULL},
                                   {95, 0xa4d50cb295b6dcc8ULL},
                                   {96, 0x1d318adccd6cbd0dULL},
                                   {97, 0xbba9f06fa1ba5f5dULL},
                                   {98, 0xc209962b662b180ULL},
                                   {99, 0x5988b84ecad8c966ULL},
                                   {100, 0xd9a013502df06936ULL},
                                   {101, 0x5c4f37ba41d33897ULL},
                                   {102, 0x1a3006b49e61dd3aULL},
                                   {103, 0xdbd14aa0c7c24f6ULL},
                                   {104, 0x373e67cc4566c02ULL},
                                   {105, 0x2d161892bf76575aULL},
                                   {106, 0xa1afdb1c21210df1ULL},
                                   {107, 0x67cf3eecc8927ac4ULL},
                                   {108, 0xbcd20427406a5f03ULL},
                                   {109, 0x13a3c70b4117d461ULL},
                                   {110, 0xc32d455ca217b7baULL},
                                   {111, 0x4b6a7e29a6519e64ULL},
                                   {112, 0xe84197b0bf0d4b64ULL},
                                   {113, 0x2c3dc36f07f89d5bULL},
                                   {114, 0x20b8359d574ef8fdULL},
                                   {115, 0x110859b9013b43a8ULL},
                                   {116, 0x26bc33981220b4afULL},
                                   {117, 0xdc858f011c67ccebULL},
                                   {118, 0x2e8a71bda3a56460ULL},
                                   {119, 0x49cc33f353e54ab2ULL},
                                   {120, 0x348b6b85e82d7396ULL},
                                   {121, 0xf9faa46d2774d0cfULL},
                                   {122, 0x6e9088fc76c47b16ULL},
                                   {123, 0x315d5a04c75fca1aULL},
                                   {124, 0xbc828f67386b1015ULL},
                                   {125, 0x6c437d17b79c1af7ULL},
                                   {126, 0xadd1822263f57133ULL},
                                   {127, 0x21c2614f49b22d6ULL},
                                   {128, 0xe2235a4abb434928ULL},
                                   {129, 0xc0b345ae90cf3df9ULL},
                                   {130, 0xa7023bf182827ab1ULL},
                                   {192, 0x195667ee537d02ccULL},
                                   {200, 0x33ba9c6e41fdef0fULL},
                                   {255, 0x2e2785d58bc3aa59ULL},
                                   {256, 0x434d26f502ad738cULL},
                                   {257, 0x74c30cbea6a63b84ULL},
                                   {1000, 0xa275c2ad66594e46ULL},
                                   {4096, 0xbe53789e6c9e57fbULL}

};

std::string farm_input(size_t n) {
  // Mirrors the generator used for the vectors: x = x * 1103515245 + 12345 (mod 2^32).
  uint32_t x = static_cast<uint32_t>(n + 7);
  std::string s(n, '\0');
  for (auto& c : s) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>((x >> 16) & 0xff);
  }
  return s;
}

TEST(Hash, FarmFingerprint64MatchesReferenceVectors) {
  for (const auto& v : kFarmVectors) {
    EXPECT_EQ(farm_fingerprint64(farm_input(v.len)), v.fingerprint) << "length " << v.len;
  }
  // Short strings whose buckets were computed with the same reference.
  EXPECT_EQ(hash_bucket("abc", 100, HashKind::kFarmHash), 85);
  EXPECT_EQ(hash_bucket("00012", 100, HashKind::kFarmHash), 15);
  EXPECT_EQ(hash_bucket("12", 100, HashKind::kFarmHash), 88);
}

TEST(Hash, EnvSelectsFarmHash) {
  ::unsetenv("USE_FARM_HASH_TO_BUCKETIZE");
  EXPECT_EQ(hash_kind_from_env(), HashKind::kStdHash);
  ::setenv("USE_FARM_HASH_TO_BUCKETIZE", "TRUE", 1);
  EXPECT_EQ(hash_kind_from_env(), HashKind::kFarmHash);
  ::setenv("USE_FARM_HASH_TO_BUCKETIZE", "false", 1);
  EXPECT_EQ(hash_kind_from_env(), HashKind::kStdHash);
  ::unsetenv("USE_FARM_HASH_TO_BUCKETIZE");
}

}  // namespace hash_test
}  // namespace tzrec::feature
