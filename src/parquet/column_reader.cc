#include "parquet/column_reader.h"

#include <algorithm>

#include <fmt/format.h>

#include "parquet/bit_util.h"
#include "parquet/codecs.h"
#include "parquet/crc32.h"
#include "parquet/metadata.h"

namespace tzrec::parquet {
namespace {

// Copies value slots: `valid` entries take the next compact value, nulls a zero of width W.
template <int W>
void scatter_fixed(const int16_t* def, int16_t max_def, int64_t count, const uint8_t* src, uint8_t* dst) {
  for (int64_t i = 0; i < count; ++i) {
    if (def[i] == max_def) {
      std::memcpy(dst, src, W);
      src += W;
    } else {
      std::memset(dst, 0, W);
    }
    dst += W;
  }
}

void scatter_fixed_any(const int16_t* def, int16_t max_def, int64_t count, int w, const uint8_t* src, uint8_t* dst) {
  switch (w) {
    case 1: scatter_fixed<1>(def, max_def, count, src, dst); return;
    case 4: scatter_fixed<4>(def, max_def, count, src, dst); return;
    case 8: scatter_fixed<8>(def, max_def, count, src, dst); return;
    case 12: scatter_fixed<12>(def, max_def, count, src, dst); return;
    default:
      for (int64_t i = 0; i < count; ++i) {
        if (def[i] == max_def) {
          std::memcpy(dst, src, w);
          src += w;
        } else {
          std::memset(dst, 0, w);
        }
        dst += w;
      }
  }
}

// Appends byte-array values to out->values / out->offsets.
void append_strings(const std::string_view* src, int64_t count, ColumnData* out) {
  size_t total = 0;
  for (int64_t i = 0; i < count; ++i) total += src[i].size();
  uint8_t* dst = out->values.grow(total);
  int64_t base = out->offsets.back();
  size_t old = out->offsets.size();
  out->offsets.resize(old + static_cast<size_t>(count));
  int64_t* off = out->offsets.data() + old;
  size_t pos = 0;
  for (int64_t i = 0; i < count; ++i) {
    size_t len = src[i].size();
    bits::copy_bytes(dst + pos, src[i].data(), len);
    pos += len;
    off[i] = base + static_cast<int64_t>(pos);
  }
}

}  // namespace

ColumnChunkReader::ColumnChunkReader(const ColumnDescriptor& column, Compression codec, int64_t row_group_rows,
                                     ErrorContext context, const ReadLimits& limits)
    : column_(column),
      codec_(codec),
      row_group_rows_(row_group_rows),
      context_(std::move(context)),
      limits_(limits),
      width_(column.type == PhysicalType::kFixedLenByteArray ? column.type_length
             : column.type == PhysicalType::kByteArray       ? 0
                                                             : fixed_width(column.type)) {}

void ColumnChunkReader::read(const std::vector<PageRange>& ranges, int64_t row_begin, int64_t row_end,
                             ColumnData* out) {
  row_begin_ = row_begin;
  row_end_ = row_end;
  if (!codec_supported(codec_)) {
    throw_data_error(context_, fmt::format("unsupported codec {} (supported: UNCOMPRESSED, SNAPPY, GZIP, ZSTD, "
                                           "LZ4_RAW, LZ4, BROTLI); rewrite the file with one of these",
                                           to_string(codec_)));
  }
  for (const PageRange& range : ranges) {
    if (done_) break;
    rows_started_ = range.first_row;
    in_range_ = false;
    read_range(range, out);
  }
  context_.page = -1;
  if (!done_ && rows_started_ < row_end_) {
    throw_data_error(context_, fmt::format("column chunk ends after {} rows but the row group has {} rows; the file is "
                                           "truncated or corrupt",
                                           rows_started_, row_group_rows_));
  }
}

void ColumnChunkReader::read_range(const PageRange& range, ColumnData* out) {
  size_t pos = 0;
  int64_t ordinal = range.first_page;
  while (pos < range.size && !done_) {
    context_.page = ordinal;
    PageHeader h;
    size_t header_size = 0;
    try {
      h = decode_page_header(range.data + pos, range.size - pos, &header_size);
    } catch (const DecodeError& e) {
      throw_data_error(context_, fmt::format("corrupt page header: {}", e.what()));
    }
    size_t body = pos + header_size;
    if (h.compressed_page_size < 0 || h.uncompressed_page_size < 0) {
      throw_data_error(context_, "page header has a negative size");
    }
    if (static_cast<size_t>(h.compressed_page_size) > range.size - body) {
      throw_data_error(context_, fmt::format("page of {} bytes extends beyond the column chunk ({} bytes left); the "
                                             "file is truncated or corrupt",
                                             h.compressed_page_size, range.size - body));
    }
    if (static_cast<size_t>(h.uncompressed_page_size) > limits_.max_page_bytes) {
      throw_data_error(context_, fmt::format("page claims {} uncompressed bytes, more than the limit of {}",
                                             h.uncompressed_page_size, limits_.max_page_bytes));
    }
    const uint8_t* body_ptr = range.data + body;
    bool decode = h.type == PageType::kDictionaryPage || h.type == PageType::kDataPage ||
                  h.type == PageType::kDataPageV2;
    if (decode && h.crc && limits_.verify_crc) {
      uint32_t crc = crc32(body_ptr, static_cast<size_t>(h.compressed_page_size));
      if (crc != *h.crc) {
        throw_data_error(context_, fmt::format("page checksum mismatch (CRC32 {:08x}, header says {:08x}); the file "
                                               "is corrupt",
                                               crc, *h.crc));
      }
    }
    try {
      if (h.type == PageType::kDictionaryPage) {
        read_dictionary(h, body_ptr);
      } else if (h.type == PageType::kDataPage || h.type == PageType::kDataPageV2) {
        read_data_page(h, body_ptr, out);
      }
      // INDEX_PAGE and unknown page types are skipped, as the format asks of readers.
    } catch (const DecodeError& e) {
      throw_data_error(context_, e.what());
    }
    pos = body + static_cast<size_t>(h.compressed_page_size);
    ++ordinal;
  }
}

void ColumnChunkReader::read_dictionary(const PageHeader& h, const uint8_t* body) {
  if (!h.dictionary_page_header) throw_decode_error("DICTIONARY_PAGE without a dictionary_page_header");
  if (dict_.present || seen_data_page_) throw_decode_error("dictionary page after the first page of the chunk");
  dict_.storage.resize(static_cast<size_t>(h.uncompressed_page_size));
  if (!dict_.storage.empty()) {
    decompress(codec_, body, static_cast<size_t>(h.compressed_page_size), dict_.storage.data(), dict_.storage.size());
  }
  decode_dictionary(column_, *h.dictionary_page_header, &dict_);
}

void ColumnChunkReader::read_data_page(const PageHeader& h, const uint8_t* body, ColumnData* out) {
  seen_data_page_ = true;
  const bool v2 = h.type == PageType::kDataPageV2;
  if (v2 ? !h.data_page_header_v2 : !h.data_page_header) {
    throw_decode_error(fmt::format("{} without its header", to_string(h.type)));
  }
  const int64_t n = v2 ? h.data_page_header_v2->num_values : h.data_page_header->num_values;
  const Encoding encoding = v2 ? h.data_page_header_v2->encoding : h.data_page_header->encoding;
  if (n < 0 || n > limits_.max_page_values) {
    throw_decode_error(fmt::format("page claims {} values (limit {})", n, limits_.max_page_values));
  }
  // Rows in this page, when known without decoding the values: lets us skip whole pages.
  int64_t page_rows = -1;
  bool v2_rep_decoded = false;
  if (v2 && column_.max_rep == 0) {
    page_rows = h.data_page_header_v2->num_rows;
    if (page_rows != n) throw_decode_error(fmt::format("DATA_PAGE_V2 has {} rows for {} values", page_rows, n));
  } else if (v2) {
    // A repeated column's rows are the entries whose repetition level is 0. The header's
    // num_rows is not trusted: some writers (e.g. parquetjs for bare `repeated` fields) store the
    // value count there. The levels of a DATA_PAGE_V2 are stored uncompressed, so counting is cheap.
    const DataPageHeaderV2& d = *h.data_page_header_v2;
    if (d.repetition_levels_byte_length < 0 ||
        static_cast<size_t>(d.repetition_levels_byte_length) > static_cast<size_t>(h.compressed_page_size)) {
      throw_decode_error(fmt::format("DATA_PAGE_V2 repetition levels ({} bytes) exceed the page",
                                     d.repetition_levels_byte_length));
    }
    decode_levels_v2(column_.max_rep, body, static_cast<size_t>(d.repetition_levels_byte_length), n, &page_.rep);
    v2_rep_decoded = true;
    page_rows = 0;
    for (int64_t i = 0; i < n; ++i) page_rows += page_.rep[static_cast<size_t>(i)] == 0;
  } else if (column_.max_rep == 0) {
    page_rows = n;
  }
  if (page_rows >= 0) {
    if (rows_started_ + page_rows > row_group_rows_) {
      throw_decode_error(fmt::format("pages hold more than the row group's {} rows", row_group_rows_));
    }
    // A page that continues the previous row (possible in v1, and from writers that split rows
    // across v2 pages) is needed while that row is in range.
    const bool starts_row = !v2_rep_decoded || n == 0 || page_.rep[0] == 0;
    if (rows_started_ >= row_end_ && starts_row) {
      done_ = true;
      return;
    }
    if (rows_started_ + page_rows <= row_begin_) {
      rows_started_ += page_rows;  // entirely before the range: not even decompressed
      return;
    }
  }

  // Levels and the (decompressed) values section.
  page_.num_entries = n;
  const uint8_t* values = nullptr;
  size_t values_size = 0;
  const size_t csize = static_cast<size_t>(h.compressed_page_size);
  const size_t usize = static_cast<size_t>(h.uncompressed_page_size);
  if (!v2) {
    page_.page.resize(usize);
    if (usize > 0) decompress(codec_, body, csize, page_.page.data(), usize);
    const uint8_t* p = page_.page.data();
    size_t left = usize;
    if (column_.max_rep > 0) {
      size_t used = decode_levels_v1(h.data_page_header->repetition_level_encoding, column_.max_rep, p, left, n,
                                     &page_.rep);
      p += used;
      left -= used;
    }
    if (column_.max_def > 0) {
      size_t used = decode_levels_v1(h.data_page_header->definition_level_encoding, column_.max_def, p, left, n,
                                     &page_.def);
      p += used;
      left -= used;
    }
    values = p;
    values_size = left;
  } else {
    const DataPageHeaderV2& d = *h.data_page_header_v2;
    if (d.repetition_levels_byte_length < 0 || d.definition_levels_byte_length < 0) {
      throw_decode_error("DATA_PAGE_V2 has negative level lengths");
    }
    size_t rep_len = static_cast<size_t>(d.repetition_levels_byte_length);
    size_t def_len = static_cast<size_t>(d.definition_levels_byte_length);
    if (rep_len + def_len > csize || rep_len + def_len > usize) {
      throw_decode_error(fmt::format("DATA_PAGE_V2 level sections ({} + {} bytes) exceed the page", rep_len, def_len));
    }
    if (column_.max_rep > 0 && !v2_rep_decoded) decode_levels_v2(column_.max_rep, body, rep_len, n, &page_.rep);
    if (column_.max_def > 0) decode_levels_v2(column_.max_def, body + rep_len, def_len, n, &page_.def);
    const uint8_t* section = body + rep_len + def_len;
    size_t section_size = csize - rep_len - def_len;
    size_t section_usize = usize - rep_len - def_len;
    if (d.is_compressed && codec_ != Compression::kUncompressed && section_usize > 0) {
      page_.page.resize(section_usize);
      decompress(codec_, section, section_size, page_.page.data(), section_usize);
      values = page_.page.data();
      values_size = section_usize;
    } else {
      values = section;
      values_size = section_size;
    }
  }
  if (column_.max_rep > 0 && rows_started_ == 0 && n > 0 && page_.rep[0] != 0) {
    throw_decode_error("the column chunk's first value does not start a row (repetition level > 0)");
  }
  page_.num_values = count_values(column_, page_);

  if (column_.max_rep == 0) {
    const int64_t first_row = rows_started_;
    const int64_t a = std::max<int64_t>(0, row_begin_ - first_row);
    const int64_t b = std::min<int64_t>(n, row_end_ - first_row);
    // Required fixed-width values of a page wholly in range: decode straight into the output.
    if (column_.max_def == 0 && width_ > 0 && a == 0 && b == n) {
      uint8_t* dst = out->values.grow(static_cast<size_t>(n) * width_);
      decode_values(column_, encoding, values, values_size, dict_, limits_.max_page_bytes, &page_, dst);
      out->num_rows += n;
      rows_started_ += n;
      if (rows_started_ >= row_end_) done_ = true;
      return;
    }
    decode_values(column_, encoding, values, values_size, dict_, limits_.max_page_bytes, &page_, nullptr);
    append_flat(first_row, out);
    return;
  }
  decode_values(column_, encoding, values, values_size, dict_, limits_.max_page_bytes, &page_, nullptr);
  append_nested(out);
}

// Flat column: entry i of the page is row first_row + i.
void ColumnChunkReader::append_flat(int64_t first_row, ColumnData* out) {
  const int64_t n = page_.num_entries;
  const int64_t a = std::max<int64_t>(0, row_begin_ - first_row);
  const int64_t b = std::min<int64_t>(n, row_end_ - first_row);
  rows_started_ = first_row + n;
  if (rows_started_ >= row_end_) done_ = true;
  if (b <= a) return;
  const int64_t count = b - a;
  out->num_rows += count;
  const int16_t max_def = column_.max_def;
  // Index of the first value used: the values of the skipped entries come first.
  int64_t v0 = a;
  if (max_def > 0) {
    v0 = 0;
    for (int64_t i = 0; i < a; ++i) v0 += page_.def[static_cast<size_t>(i)] == max_def;
  }
  if (max_def > 0 && column_.leaf_nullable) {
    size_t old = out->validity.size();
    out->validity.resize(old + static_cast<size_t>(count));
    uint8_t* v = out->validity.data() + old;
    const int16_t* def = page_.def.data() + a;
    for (int64_t i = 0; i < count; ++i) v[i] = def[i] == max_def;
  }
  if (column_.leaf_keeps_def) {
    out->defs.insert(out->defs.end(), page_.def.begin() + a, page_.def.begin() + b);
  }
  if (width_ > 0) {
    uint8_t* dst = out->values.grow(static_cast<size_t>(count) * width_);
    const uint8_t* src = page_.fixed.data() + v0 * width_;
    if (max_def == 0) {
      std::memcpy(dst, src, static_cast<size_t>(count) * width_);
    } else {
      scatter_fixed_any(page_.def.data() + a, max_def, count, width_, src, dst);
    }
    return;
  }
  if (max_def == 0) {
    append_strings(page_.strings.data() + v0, count, out);
    return;
  }
  // Optional strings: null slots are empty.
  const int16_t* def = page_.def.data() + a;
  const std::string_view* src = page_.strings.data() + v0;
  size_t total = 0;
  int64_t valid = 0;
  for (int64_t i = 0; i < count; ++i) valid += def[i] == max_def;
  for (int64_t i = 0; i < valid; ++i) total += src[i].size();
  uint8_t* dst = out->values.grow(total);
  int64_t base = out->offsets.back();
  size_t old = out->offsets.size();
  out->offsets.resize(old + static_cast<size_t>(count));
  int64_t* off = out->offsets.data() + old;
  size_t pos = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (def[i] == max_def) {
      bits::copy_bytes(dst + pos, src->data(), src->size());
      pos += src->size();
      ++src;
    }
    off[i] = base + static_cast<int64_t>(pos);
  }
}

void ColumnChunkReader::append_value(int64_t value_index, bool valid, ColumnData* out) {
  if (column_.leaf_nullable) out->validity.push_back(valid ? 1 : 0);
  if (width_ > 0) {
    uint8_t* dst = out->values.grow(static_cast<size_t>(width_));
    if (valid) {
      std::memcpy(dst, page_.fixed.data() + value_index * width_, static_cast<size_t>(width_));
    } else {
      std::memset(dst, 0, static_cast<size_t>(width_));
    }
    return;
  }
  if (valid) {
    const std::string_view& s = page_.strings[static_cast<size_t>(value_index)];
    out->values.append(s.data(), s.size());
  }
  out->offsets.push_back(static_cast<int64_t>(out->values.size()));
}

// Nested column: walks (rep, def) entries and rebuilds list offsets and validity.
void ColumnChunkReader::append_nested(ColumnData* out) {
  const int64_t n = page_.num_entries;
  const int levels = column_.max_rep;
  const int16_t max_def = column_.max_def;
  const int16_t* rep = page_.rep.data();
  const int16_t* def = page_.def.data();
  int64_t value_index = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int r = rep[i];
    const int16_t d = def[i];
    if (r == 0) {
      int64_t row = rows_started_++;
      if (row >= row_end_) {
        done_ = true;
        return;
      }
      if (rows_started_ > row_group_rows_) {
        throw_decode_error(fmt::format("pages hold more than the row group's {} rows", row_group_rows_));
      }
      in_range_ = row >= row_begin_;
      if (in_range_) out->num_rows += 1;
    }
    const bool valid = d == max_def;
    const int64_t vi = value_index;
    value_index += valid;
    if (!in_range_) continue;
    for (int k = r;; ++k) {
      if (k == levels) {
        out->lists[static_cast<size_t>(levels - 1)].offsets.back() += 1;
        if (column_.leaf_keeps_def) out->defs.push_back(d);
        append_value(vi, valid, out);
        break;
      }
      ListLevel& level = out->lists[static_cast<size_t>(k)];
      if (k > 0) out->lists[static_cast<size_t>(k - 1)].offsets.back() += 1;
      level.offsets.push_back(level.offsets.back());
      const int16_t rd = column_.repeated_def[static_cast<size_t>(k)];
      const bool present = d >= rd - 1;
      if (column_.list_nullable[static_cast<size_t>(k)]) level.validity.push_back(present ? 1 : 0);
      if (column_.list_keeps_def[static_cast<size_t>(k)]) level.defs.push_back(d);
      if (d < rd) break;  // null or empty list
    }
  }
}

}  // namespace tzrec::parquet
