#include "base/md5.h"

#include <gtest/gtest.h>

namespace tzrec {
namespace md5_test {

// The test suite of RFC 1321, appendix A.5.
TEST(Md5, Rfc1321TestSuite) {
  EXPECT_EQ(md5_hex(""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(md5_hex("a"), "0cc175b9c0f1b6a831c399e269772661");
  EXPECT_EQ(md5_hex("abc"), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(md5_hex("message digest"), "f96b697d7cb7938d525a2f31aaf161d0");
  EXPECT_EQ(md5_hex("abcdefghijklmnopqrstuvwxyz"), "c3fcd3d76192e4007dfb496cca67e13b");
  EXPECT_EQ(md5_hex("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
            "d174ab98d277d9f5a5611c2c9f419d9f");
  EXPECT_EQ(md5_hex("12345678901234567890123456789012345678901234567890123456789012345678901234567890"),
            "57edf4a22be3c955ac49da2e2107b67a");
}

// Fed in pieces that straddle the 64-byte blocks: the digest of the whole.
TEST(Md5, IncrementalUpdatesEqualOneUpdate) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data.push_back(static_cast<char>(i * 7 + 3));
  Md5 md5;
  for (size_t at = 0; at < data.size(); at += 37) md5.update(std::string_view(data).substr(at, 37));
  EXPECT_EQ(md5.hex_digest(), md5_hex(data));
}

}  // namespace md5_test
}  // namespace tzrec
