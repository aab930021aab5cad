// MD5 (RFC 1321), for content-addressed file names (the asset names of fg.json and export
// packages). Not for security.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tzrec {

class Md5 {
 public:
  Md5();
  void update(std::string_view data);
  // The digest as 32 lowercase hex digits; the object is spent afterwards.
  std::string hex_digest();

 private:
  void block(const unsigned char* p);
  uint32_t state_[4];
  uint64_t length_ = 0;  // bytes
  unsigned char buffer_[64];
  size_t buffered_ = 0;
};

// The hex digest of `data`.
std::string md5_hex(std::string_view data);

}  // namespace tzrec
