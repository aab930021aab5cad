#include "parquet/page_decoder.h"

#include <algorithm>

#include <fmt/format.h>

#include "parquet/bit_util.h"
#include "parquet/encodings.h"
#include "parquet/errors.h"
#include "parquet/rle.h"

namespace tzrec::parquet {
namespace {

int value_width(const ColumnDescriptor& c) {
  return c.type == PhysicalType::kFixedLenByteArray ? c.type_length : fixed_width(c.type);
}

bool is_byte_array(const ColumnDescriptor& c) { return c.type == PhysicalType::kByteArray; }

// Levels wider than the maximum are corrupt; only possible when max_level < 2^bit_width - 1.
void check_levels(const std::vector<int16_t>& levels, int64_t n, int16_t max_level) {
  if (max_level == (1 << bits::bit_width_of(static_cast<uint64_t>(max_level))) - 1) return;
  int16_t hi = 0;
  for (int64_t i = 0; i < n; ++i) hi = std::max(hi, levels[static_cast<size_t>(i)]);
  if (hi > max_level) throw_decode_error(fmt::format("level {} exceeds the column's maximum level {}", hi, max_level));
}

[[noreturn]] void bad_encoding(const ColumnDescriptor& c, Encoding e) {
  throw_decode_error(fmt::format("encoding {} is not valid for {} values", to_string(e), to_string(c.type)));
}

// Dictionary indices: one byte of bit width, then RLE/bit-packed runs.
void decode_indices(const uint8_t* data, size_t size, int64_t n, int64_t dict_size, std::vector<uint32_t>* out) {
  if (size < 1) throw_decode_error("dictionary-encoded page has no bit width byte");
  int bit_width = data[0];
  if (bit_width > 32) throw_decode_error(fmt::format("dictionary index bit width {} > 32", bit_width));
  if (out->size() < static_cast<size_t>(n)) out->resize(static_cast<size_t>(n));
  RleDecoder dec(data + 1, size - 1, bit_width);
  dec.decode(out->data(), n);
  uint32_t hi = 0;
  for (int64_t i = 0; i < n; ++i) hi = std::max(hi, (*out)[static_cast<size_t>(i)]);
  if (n > 0 && static_cast<int64_t>(hi) >= dict_size) {
    throw_decode_error(fmt::format("dictionary index {} out of range (dictionary has {} values)", hi, dict_size));
  }
}

}  // namespace

void decode_dictionary(const ColumnDescriptor& column, const DictionaryPageHeader& header, Dictionary* dict) {
  if (header.encoding != Encoding::kPlain && header.encoding != Encoding::kPlainDictionary) {
    throw_decode_error(fmt::format("dictionary page encoding {} (expected PLAIN)", to_string(header.encoding)));
  }
  if (header.num_values < 0) throw_decode_error("dictionary page has a negative value count");
  const int64_t n = header.num_values;
  const uint8_t* data = dict->storage.data();
  const size_t size = dict->storage.size();
  dict->size = n;
  dict->present = true;
  if (is_byte_array(column)) {
    // Each value takes at least its 4-byte length: bounds n before allocating.
    if (static_cast<uint64_t>(n) > size / 4 + 1) throw_decode_error("dictionary page holds fewer values than announced");
    dict->strings.resize(static_cast<size_t>(n));
    decode_plain_byte_array(data, size, n, dict->strings.data());
  } else if (column.type == PhysicalType::kBoolean) {
    if (static_cast<uint64_t>(n) > static_cast<uint64_t>(size) * 8) throw_decode_error("dictionary page too short");
    dict->fixed.resize(static_cast<size_t>(n));
    decode_plain_boolean(data, size, n, dict->fixed.data());
  } else {
    int w = value_width(column);
    if (static_cast<uint64_t>(n) * w > size) throw_decode_error("dictionary page holds fewer values than announced");
    dict->fixed.resize(static_cast<size_t>(n) * w);
    decode_plain_fixed(data, size, n, w, dict->fixed.data());
    if (column.type == PhysicalType::kFixedLenByteArray) {
      dict->strings.resize(static_cast<size_t>(n));
      decode_plain_flba(dict->fixed.data(), dict->fixed.size(), n, w, dict->strings.data());
    }
  }
}

int64_t count_values(const ColumnDescriptor& column, const PageData& page) {
  if (column.max_def == 0) return page.num_entries;
  int64_t count = 0;
  const int16_t* def = page.def.data();
  const int16_t max_def = column.max_def;
  // Blocks with a 32-bit counter vectorize well.
  for (int64_t b = 0; b < page.num_entries; b += 4096) {
    int64_t e = std::min<int64_t>(page.num_entries, b + 4096);
    int32_t c = 0;
    for (int64_t i = b; i < e; ++i) c += def[i] == max_def;
    count += c;
  }
  return count;
}

void decode_values(const ColumnDescriptor& column, Encoding encoding, const uint8_t* data, size_t size,
                   const Dictionary& dict, size_t max_bytes, PageData* page, uint8_t* direct_out) {
  const int64_t n = page->num_values;
  const bool dictionary = encoding == Encoding::kPlainDictionary || encoding == Encoding::kRleDictionary;
  if (dictionary && !dict.present) {
    throw_decode_error(fmt::format("page uses {} but the column chunk has no dictionary page", to_string(encoding)));
  }
  if (is_byte_array(column)) {
    if (page->strings.size() < static_cast<size_t>(n)) page->strings.resize(static_cast<size_t>(n));
    std::string_view* out = page->strings.data();
    switch (encoding) {
      case Encoding::kPlain: decode_plain_byte_array(data, size, n, out); return;
      case Encoding::kPlainDictionary:
      case Encoding::kRleDictionary: {
        if (n == 0) return;
        decode_indices(data, size, n, dict.size, &page->indices);
        const uint32_t* idx = page->indices.data();
        const std::string_view* d = dict.strings.data();
        for (int64_t i = 0; i < n; ++i) out[i] = d[idx[i]];
        return;
      }
      case Encoding::kDeltaLengthByteArray:
        if (n == 0) return;
        decode_delta_length_byte_array(data, size, n, out);
        return;
      case Encoding::kDeltaByteArray:
        if (n == 0) return;
        decode_delta_byte_array(data, size, n, max_bytes, &page->arena, out);
        return;
      default: bad_encoding(column, encoding);
    }
  }

  const int w = value_width(column);
  uint8_t* out = direct_out;
  if (out == nullptr) {
    page->fixed.resize(static_cast<size_t>(n) * w);
    out = page->fixed.data();
  }
  if (n == 0) return;
  if (dictionary) {
    decode_indices(data, size, n, dict.size, &page->indices);
    const uint32_t* idx = page->indices.data();
    const uint8_t* d = dict.fixed.data();
    switch (w) {
      case 4: {
        auto* o = reinterpret_cast<uint32_t*>(out);
        const auto* dv = reinterpret_cast<const uint32_t*>(d);
        for (int64_t i = 0; i < n; ++i) o[i] = dv[idx[i]];
        return;
      }
      case 8: {
        auto* o = reinterpret_cast<uint64_t*>(out);
        const auto* dv = reinterpret_cast<const uint64_t*>(d);
        for (int64_t i = 0; i < n; ++i) o[i] = dv[idx[i]];
        return;
      }
      default:
        for (int64_t i = 0; i < n; ++i) std::memcpy(out + i * w, d + static_cast<size_t>(idx[i]) * w, w);
        return;
    }
  }
  switch (encoding) {
    case Encoding::kPlain:
      if (column.type == PhysicalType::kBoolean) {
        decode_plain_boolean(data, size, n, out);
      } else {
        decode_plain_fixed(data, size, n, w, out);
      }
      return;
    case Encoding::kRle: {
      if (column.type != PhysicalType::kBoolean) bad_encoding(column, encoding);
      if (size < 4) throw_decode_error("RLE boolean page lacks its 4-byte length");
      uint32_t len = bits::load_u32(data);
      if (len > size - 4) throw_decode_error(fmt::format("RLE boolean data of {} bytes, page has {}", len, size - 4));
      RleDecoder dec(data + 4, len, 1);
      dec.decode(out, n);
      return;
    }
    case Encoding::kDeltaBinaryPacked:
      if (column.type == PhysicalType::kInt32) {
        decode_delta_binary_packed<int32_t>(data, size, n, reinterpret_cast<int32_t*>(out));
      } else if (column.type == PhysicalType::kInt64) {
        decode_delta_binary_packed<int64_t>(data, size, n, reinterpret_cast<int64_t*>(out));
      } else {
        bad_encoding(column, encoding);
      }
      return;
    case Encoding::kByteStreamSplit:
      if (column.type == PhysicalType::kBoolean || column.type == PhysicalType::kInt96) bad_encoding(column, encoding);
      decode_byte_stream_split(data, size, n, w, out);
      return;
    case Encoding::kDeltaByteArray: {
      if (column.type != PhysicalType::kFixedLenByteArray) bad_encoding(column, encoding);
      if (page->strings.size() < static_cast<size_t>(n)) page->strings.resize(static_cast<size_t>(n));
      std::string_view* views = page->strings.data();
      decode_delta_byte_array(data, size, n, max_bytes, &page->arena, views);
      for (int64_t i = 0; i < n; ++i) {
        if (views[static_cast<size_t>(i)].size() != static_cast<size_t>(w)) {
          throw_decode_error(fmt::format("DELTA_BYTE_ARRAY value {} has {} bytes, FIXED_LEN_BYTE_ARRAY width is {}", i,
                                         views[static_cast<size_t>(i)].size(), w));
        }
        std::memcpy(out + i * w, views[static_cast<size_t>(i)].data(), w);
      }
      return;
    }
    default: bad_encoding(column, encoding);
  }
}

size_t decode_levels_v1(Encoding encoding, int16_t max_level, const uint8_t* data, size_t size, int64_t n,
                        std::vector<int16_t>* out) {
  int bit_width = bits::bit_width_of(static_cast<uint64_t>(max_level));
  if (out->size() < static_cast<size_t>(n)) out->resize(static_cast<size_t>(n));
  size_t used = 0;
  if (encoding == Encoding::kRle) {
    if (size < 4) throw_decode_error("level data lacks its 4-byte length");
    uint32_t len = bits::load_u32(data);
    if (len > size - 4) throw_decode_error(fmt::format("level data of {} bytes, page has {} left", len, size - 4));
    RleDecoder dec(data + 4, len, bit_width);
    dec.decode(out->data(), n);
    used = 4 + static_cast<size_t>(len);
  } else if (encoding == Encoding::kBitPacked) {
    used = decode_bit_packed_levels(data, size, bit_width, out->data(), n);
  } else {
    throw_decode_error(fmt::format("level encoding {} (expected RLE or BIT_PACKED)", to_string(encoding)));
  }
  check_levels(*out, n, max_level);
  return used;
}

void decode_levels_v2(int16_t max_level, const uint8_t* data, size_t size, int64_t n, std::vector<int16_t>* out) {
  int bit_width = bits::bit_width_of(static_cast<uint64_t>(max_level));
  if (out->size() < static_cast<size_t>(n)) out->resize(static_cast<size_t>(n));
  RleDecoder dec(data, size, bit_width);
  dec.decode(out->data(), n);
  check_levels(*out, n, max_level);
}

}  // namespace tzrec::parquet
