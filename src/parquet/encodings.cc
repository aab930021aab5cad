#include "parquet/encodings.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include <fmt/format.h>

#include "parquet/bit_util.h"
#include "parquet/errors.h"

namespace tzrec::parquet {

size_t decode_plain_fixed(const uint8_t* data, size_t size, int64_t n, int width, uint8_t* out) {
  uint64_t bytes = static_cast<uint64_t>(n) * static_cast<uint64_t>(width);
  if (n < 0 || bytes > size) {
    throw_decode_error(fmt::format("PLAIN: {} values of {} bytes need {} bytes, page has {}", n, width, bytes, size));
  }
  if (bytes > 0) std::memcpy(out, data, bytes);
  return bytes;
}

size_t decode_plain_boolean(const uint8_t* data, size_t size, int64_t n, uint8_t* out) {
  size_t bytes = static_cast<size_t>((n + 7) / 8);
  if (bytes > size) throw_decode_error(fmt::format("PLAIN: {} booleans need {} bytes, page has {}", n, bytes, size));
  for (int64_t i = 0; i < n; ++i) out[i] = (data[i >> 3] >> (i & 7)) & 1;
  return bytes;
}

size_t decode_plain_byte_array(const uint8_t* data, size_t size, int64_t n, std::string_view* out) {
  size_t pos = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (size - pos < 4) {
      throw_decode_error(fmt::format("PLAIN: byte array {} of {}: length runs past the end of the page", i, n));
    }
    uint32_t len = bits::load_u32(data + pos);
    pos += 4;
    if (len > size - pos) {
      throw_decode_error(fmt::format("PLAIN: byte array {} of {} has length {} but {} bytes are left", i, n, len,
                                     size - pos));
    }
    out[i] = std::string_view(reinterpret_cast<const char*>(data + pos), len);
    pos += len;
  }
  return pos;
}

size_t decode_plain_flba(const uint8_t* data, size_t size, int64_t n, int width, std::string_view* out) {
  uint64_t bytes = static_cast<uint64_t>(n) * static_cast<uint64_t>(width);
  if (bytes > size) {
    throw_decode_error(fmt::format("PLAIN: {} values of {} bytes need {} bytes, page has {}", n, width, bytes, size));
  }
  for (int64_t i = 0; i < n; ++i) out[i] = std::string_view(reinterpret_cast<const char*>(data + i * width), width);
  return bytes;
}

// ---- DELTA_BINARY_PACKED ------------------------------------------------------------------------

namespace {

struct DeltaHeader {
  uint64_t block_size = 0;
  uint64_t miniblocks = 0;
  uint64_t values_per_miniblock = 0;
  int64_t total = 0;
  int64_t first = 0;
};

DeltaHeader read_delta_header(const uint8_t** pos, const uint8_t* end) {
  DeltaHeader h;
  h.block_size = bits::read_uleb(pos, end);
  h.miniblocks = bits::read_uleb(pos, end);
  uint64_t total = bits::read_uleb(pos, end);
  h.first = bits::read_zigzag(pos, end);
  if (h.block_size == 0 || h.block_size % 128 != 0 || h.block_size > (1u << 20)) {
    throw_decode_error(fmt::format("DELTA_BINARY_PACKED: invalid block size {}", h.block_size));
  }
  if (h.miniblocks == 0 || h.miniblocks > h.block_size || h.block_size % h.miniblocks != 0) {
    throw_decode_error(fmt::format("DELTA_BINARY_PACKED: invalid miniblock count {}", h.miniblocks));
  }
  h.values_per_miniblock = h.block_size / h.miniblocks;
  if (h.values_per_miniblock % 8 != 0) {
    throw_decode_error(fmt::format("DELTA_BINARY_PACKED: {} values per miniblock", h.values_per_miniblock));
  }
  if (total > (uint64_t{1} << 40)) throw_decode_error("DELTA_BINARY_PACKED: value count too large");
  h.total = static_cast<int64_t>(total);
  return h;
}

}  // namespace

int64_t delta_binary_packed_count(const uint8_t* data, size_t size) {
  const uint8_t* pos = data;
  return read_delta_header(&pos, data + size).total;
}

template <typename T>
size_t decode_delta_binary_packed(const uint8_t* data, size_t size, int64_t n, T* out) {
  using U = std::make_unsigned_t<T>;
  const uint8_t* pos = data;
  const uint8_t* end = data + size;
  DeltaHeader h = read_delta_header(&pos, end);
  if (n > h.total) {
    throw_decode_error(fmt::format("DELTA_BINARY_PACKED: page needs {} values, encoding has {}", n, h.total));
  }
  // Decode exactly the n values wanted: the announced total cannot make us loop longer (a
  // miniblock of bit width 0 covers many values with no bytes at all).
  const int64_t want = n;
  U last = static_cast<U>(h.first);
  int64_t done = 0;
  if (want > 0) {
    out[0] = static_cast<T>(last);
    done = 1;
  }
  uint64_t deltas[64];
  while (done < want) {
    U min_delta = static_cast<U>(bits::read_zigzag(&pos, end));
    if (static_cast<uint64_t>(end - pos) < h.miniblocks) {
      throw_decode_error("DELTA_BINARY_PACKED: miniblock bit widths past the end of the data");
    }
    const uint8_t* widths = pos;
    pos += h.miniblocks;
    for (uint64_t mb = 0; mb < h.miniblocks && done < want; ++mb) {
      int w = widths[mb];
      if (w > static_cast<int>(sizeof(T) * 8)) {
        throw_decode_error(fmt::format("DELTA_BINARY_PACKED: miniblock bit width {} for {}-bit values", w,
                                       sizeof(T) * 8));
      }
      int64_t count = std::min<int64_t>(static_cast<int64_t>(h.values_per_miniblock), want - done);
      size_t full_bytes = static_cast<size_t>(h.values_per_miniblock * w / 8);
      size_t need = static_cast<size_t>((static_cast<uint64_t>(count) * w + 7) / 8);
      size_t avail = static_cast<size_t>(end - pos);
      if (need > avail) throw_decode_error("DELTA_BINARY_PACKED: miniblock past the end of the data");
      for (int64_t off = 0; off < count; off += 64) {
        int64_t k = std::min<int64_t>(64, count - off);
        bits::unpack_bits(pos, avail, static_cast<uint64_t>(off) * w, w, deltas, k);
        for (int64_t i = 0; i < k; ++i) {
          last = static_cast<U>(last + min_delta + static_cast<U>(deltas[i]));
          out[done++] = static_cast<T>(last);
        }
      }
      // The last miniblock is padded to its full size; tolerate writers that cut the padding.
      pos += std::min(full_bytes, avail);
    }
  }
  return static_cast<size_t>(pos - data);
}

template size_t decode_delta_binary_packed<int32_t>(const uint8_t*, size_t, int64_t, int32_t*);
template size_t decode_delta_binary_packed<int64_t>(const uint8_t*, size_t, int64_t, int64_t*);

size_t decode_delta_length_byte_array(const uint8_t* data, size_t size, int64_t n, std::string_view* out) {
  int64_t total = delta_binary_packed_count(data, size);
  if (total != n) {
    throw_decode_error(fmt::format("DELTA_LENGTH_BYTE_ARRAY: page has {} values, encoding announces {}", n, total));
  }
  std::vector<int32_t> lengths(static_cast<size_t>(total));
  size_t pos = decode_delta_binary_packed<int32_t>(data, size, total, lengths.data());
  for (int64_t i = 0; i < total; ++i) {
    int32_t len = lengths[static_cast<size_t>(i)];
    if (len < 0 || static_cast<size_t>(len) > size - pos) {
      throw_decode_error(fmt::format("DELTA_LENGTH_BYTE_ARRAY: value {} has length {} but {} bytes are left", i, len,
                                     size - pos));
    }
    out[i] = std::string_view(reinterpret_cast<const char*>(data + pos), static_cast<size_t>(len));
    pos += static_cast<size_t>(len);
  }
  return pos;
}

void decode_delta_byte_array(const uint8_t* data, size_t size, int64_t n, size_t max_bytes, std::string* arena,
                             std::string_view* out) {
  int64_t total = delta_binary_packed_count(data, size);
  if (total != n) {
    throw_decode_error(fmt::format("DELTA_BYTE_ARRAY: page has {} values, encoding announces {}", n, total));
  }
  std::vector<int32_t> prefix(static_cast<size_t>(total));
  size_t pos = decode_delta_binary_packed<int32_t>(data, size, total, prefix.data());
  std::vector<std::string_view> suffix(static_cast<size_t>(total));
  decode_delta_length_byte_array(data + pos, size - pos, total, suffix.data());
  // First pass: lengths and total size (checked against max_bytes before allocating).
  std::vector<size_t> offsets(static_cast<size_t>(n) + 1, 0);
  size_t prev_len = 0;
  for (int64_t i = 0; i < n; ++i) {
    int32_t p = prefix[static_cast<size_t>(i)];
    if (p < 0 || static_cast<size_t>(p) > prev_len) {
      throw_decode_error(fmt::format("DELTA_BYTE_ARRAY: value {} has prefix length {} but the previous value has {} "
                                     "bytes", i, p, prev_len));
    }
    size_t len = static_cast<size_t>(p) + suffix[static_cast<size_t>(i)].size();
    offsets[i + 1] = offsets[i] + len;
    if (offsets[i + 1] > max_bytes) {
      throw_decode_error(fmt::format("DELTA_BYTE_ARRAY: decoded values exceed {} bytes", max_bytes));
    }
    prev_len = len;
  }
  arena->resize(offsets[static_cast<size_t>(n)]);
  char* base = arena->data();
  for (int64_t i = 0; i < n; ++i) {
    size_t p = static_cast<size_t>(prefix[static_cast<size_t>(i)]);
    char* dst = base + offsets[i];
    if (p > 0) std::memcpy(dst, base + offsets[i - 1], p);
    const std::string_view& s = suffix[static_cast<size_t>(i)];
    if (!s.empty()) std::memcpy(dst + p, s.data(), s.size());
    out[i] = std::string_view(dst, offsets[i + 1] - offsets[i]);
  }
}

void decode_byte_stream_split(const uint8_t* data, size_t size, int64_t n, int width, uint8_t* out) {
  uint64_t bytes = static_cast<uint64_t>(n) * static_cast<uint64_t>(width);
  if (bytes > size) {
    throw_decode_error(fmt::format("BYTE_STREAM_SPLIT: {} values of {} bytes need {} bytes, page has {}", n, width,
                                   bytes, size));
  }
  for (int b = 0; b < width; ++b) {
    const uint8_t* stream = data + static_cast<size_t>(b) * static_cast<size_t>(n);
    for (int64_t i = 0; i < n; ++i) out[i * width + b] = stream[i];
  }
}

// ---- encoders -----------------------------------------------------------------------------------

void encode_plain_byte_array(const std::string_view* values, int64_t n, std::string* out) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t len = static_cast<uint32_t>(values[i].size());
    char le[4];
    std::memcpy(le, &len, 4);
    out->append(le, 4);
    out->append(values[i].data(), values[i].size());
  }
}

void encode_plain_boolean(const uint8_t* values, int64_t n, std::string* out) {
  size_t start = out->size();
  out->resize(start + static_cast<size_t>((n + 7) / 8), '\0');
  char* dst = out->data() + start;
  for (int64_t i = 0; i < n; ++i) {
    if (values[i]) dst[i >> 3] = static_cast<char>(dst[i >> 3] | (1 << (i & 7)));
  }
}

}  // namespace tzrec::parquet
