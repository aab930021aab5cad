#include "parquet/rle.h"

#include <algorithm>

#include <fmt/format.h>

#include "parquet/bit_util.h"
#include "parquet/errors.h"

namespace tzrec::parquet {

RleDecoder::RleDecoder(const uint8_t* data, size_t size, int bit_width)
    : pos_(data), end_(data + size), bit_width_(bit_width), value_bytes_((bit_width + 7) / 8) {
  if (bit_width < 0 || bit_width > 32) throw_decode_error(fmt::format("RLE: invalid bit width {}", bit_width));
}

bool RleDecoder::next_run() {
  if (pos_ >= end_) return false;
  uint64_t header = bits::read_uleb(&pos_, end_);
  if (header & 1) {
    uint64_t groups = header >> 1;
    if (groups == 0) throw_decode_error("RLE: empty bit-packed run");
    if (groups > (uint64_t{1} << 40)) throw_decode_error("RLE: bit-packed run too long");
    size_t bytes = static_cast<size_t>(groups) * bit_width_;
    size_t avail = static_cast<size_t>(end_ - pos_);
    int64_t values = static_cast<int64_t>(groups) * 8;
    if (bytes > avail) {
      // Some writers truncate the padding of the final run; accept the values that are there.
      bytes = avail;
      values = bit_width_ == 0 ? values : static_cast<int64_t>(avail * 8 / bit_width_);
    }
    packed_pos_ = pos_;
    packed_bytes_ = bytes;
    packed_left_ = values;
    packed_done_ = 0;
    pos_ += bytes;
  } else {
    uint64_t count = header >> 1;
    if (count == 0) throw_decode_error("RLE: empty repeated run");
    if (count > (uint64_t{1} << 40)) throw_decode_error("RLE: repeated run too long");
    if (static_cast<size_t>(end_ - pos_) < static_cast<size_t>(value_bytes_)) {
      throw_decode_error("RLE: repeated run value past the end of the data");
    }
    uint32_t v = 0;
    for (int i = 0; i < value_bytes_; ++i) v |= static_cast<uint32_t>(pos_[i]) << (8 * i);
    pos_ += value_bytes_;
    if (bit_width_ < 32 && (v >> bit_width_) != 0) {
      throw_decode_error(fmt::format("RLE: run value {} wider than {} bits", v, bit_width_));
    }
    rle_value_ = v;
    rle_left_ = static_cast<int64_t>(count);
  }
  return true;
}

template <typename T>
void RleDecoder::decode(T* out, int64_t n) {
  int64_t done = 0;
  while (done < n) {
    if (rle_left_ > 0) {
      int64_t k = std::min(rle_left_, n - done);
      std::fill(out + done, out + done + k, static_cast<T>(rle_value_));
      rle_left_ -= k;
      done += k;
    } else if (packed_left_ > 0) {
      int64_t k = std::min(packed_left_, n - done);
      bits::unpack_bits(packed_pos_, packed_bytes_, static_cast<uint64_t>(packed_done_) * bit_width_, bit_width_,
                        out + done, k);
      packed_left_ -= k;
      packed_done_ += k;
      done += k;
    } else if (!next_run()) {
      throw_decode_error(fmt::format("RLE: data ends after {} of {} values", done, n));
    }
  }
}

template void RleDecoder::decode<uint8_t>(uint8_t*, int64_t);
template void RleDecoder::decode<int16_t>(int16_t*, int64_t);
template void RleDecoder::decode<uint32_t>(uint32_t*, int64_t);

size_t decode_bit_packed_levels(const uint8_t* data, size_t size, int bit_width, int16_t* out, int64_t n) {
  size_t bytes = static_cast<size_t>((static_cast<uint64_t>(n) * bit_width + 7) / 8);
  if (bytes > size) throw_decode_error(fmt::format("BIT_PACKED levels need {} bytes, page has {}", bytes, size));
  uint64_t bit = 0;
  for (int64_t i = 0; i < n; ++i) {
    int v = 0;
    for (int b = 0; b < bit_width; ++b, ++bit) {
      v = (v << 1) | ((data[bit >> 3] >> (7 - (bit & 7))) & 1);
    }
    out[i] = static_cast<int16_t>(v);
  }
  return bytes;
}

// ---- encoder ------------------------------------------------------------------------------------

namespace {

void put_uleb(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

template <typename T>
void pack_group(const T* values, int64_t count, int bit_width, std::string* out) {
  // count <= 8, padded with zeros to 8 values = bit_width bytes.
  uint64_t acc = 0;
  int acc_bits = 0;
  for (int64_t i = 0; i < 8; ++i) {
    uint64_t v = i < count ? static_cast<uint64_t>(static_cast<uint32_t>(values[i])) : 0;
    acc |= v << acc_bits;
    acc_bits += bit_width;
    while (acc_bits >= 8) {
      out->push_back(static_cast<char>(acc & 0xff));
      acc >>= 8;
      acc_bits -= 8;
    }
  }
}

template <typename T>
int64_t run_length(const T* v, int64_t i, int64_t n) {
  int64_t j = i + 1;
  while (j < n && v[j] == v[i]) ++j;
  return j - i;
}

template <typename T>
void encode_impl(const T* values, int64_t n, int bit_width, std::string* out) {
  const int value_bytes = (bit_width + 7) / 8;
  int64_t i = 0;
  while (i < n) {
    int64_t run = run_length(values, i, n);
    if (run >= 8 || bit_width == 0) {
      if (bit_width == 0) run = n - i;
      put_uleb(static_cast<uint64_t>(run) << 1, out);
      uint32_t v = static_cast<uint32_t>(values[i]);
      for (int b = 0; b < value_bytes; ++b) out->push_back(static_cast<char>((v >> (8 * b)) & 0xff));
      i += run;
      continue;
    }
    // Literal groups of 8 until a run of >= 8 starts at a group boundary (or the data ends).
    int64_t start = i;
    int64_t groups = 0;
    while (i < n && groups < 63) {
      if (i > start && run_length(values, i, n) >= 8) break;
      i = std::min(i + 8, n);
      ++groups;
    }
    put_uleb((static_cast<uint64_t>(groups) << 1) | 1, out);
    for (int64_t g = 0; g < groups; ++g) {
      int64_t s = start + g * 8;
      pack_group(values + s, std::min<int64_t>(8, n - s), bit_width, out);
    }
  }
}

}  // namespace

void rle_encode(const uint32_t* values, int64_t n, int bit_width, std::string* out) {
  encode_impl(values, n, bit_width, out);
}

void rle_encode(const int16_t* values, int64_t n, int bit_width, std::string* out) {
  encode_impl(values, n, bit_width, out);
}

}  // namespace tzrec::parquet
