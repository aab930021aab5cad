// The RLE / bit-packed hybrid encoding (Parquet Encodings.md "RLE"): used for definition and
// repetition levels, dictionary indices and RLE booleans. Also the deprecated BIT_PACKED level
// encoding (MSB-first), which old writers still emit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tzrec::parquet {

class RleDecoder {
 public:
  // `data` holds runs (no length prefix); bit_width in [0, 32].
  RleDecoder(const uint8_t* data, size_t size, int bit_width);

  // Decodes exactly n values into out; throws DecodeError when the runs end early.
  // T: uint8_t (booleans), int16_t (levels), uint32_t (dictionary indices).
  template <typename T>
  void decode(T* out, int64_t n);

 private:
  bool next_run();

  const uint8_t* pos_;
  const uint8_t* end_;
  int bit_width_;
  int value_bytes_;
  // Current run: either `rle_left_` copies of rle_value_, or `packed_left_` packed values at
  // packed_pos_ (packed_done_ of the run already consumed).
  int64_t rle_left_ = 0;
  uint32_t rle_value_ = 0;
  int64_t packed_left_ = 0;
  int64_t packed_done_ = 0;
  const uint8_t* packed_pos_ = nullptr;
  size_t packed_bytes_ = 0;
};

// Deprecated BIT_PACKED levels: n values of bit_width bits, MSB first; returns bytes consumed.
size_t decode_bit_packed_levels(const uint8_t* data, size_t size, int bit_width, int16_t* out, int64_t n);

// Appends the hybrid encoding of values[0, n) (each < 2^bit_width) to *out (no length prefix).
void rle_encode(const uint32_t* values, int64_t n, int bit_width, std::string* out);
void rle_encode(const int16_t* values, int64_t n, int bit_width, std::string* out);

}  // namespace tzrec::parquet
