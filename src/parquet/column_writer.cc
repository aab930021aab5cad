#include "parquet/column_writer.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "parquet/bit_util.h"
#include "parquet/codecs.h"
#include "parquet/crc32.h"
#include "parquet/encodings.h"
#include "parquet/rle.h"
#include "parquet/writer.h"

namespace tzrec::parquet {
namespace {

constexpr int64_t kMaxPageRows = 20000;  // keeps pages small enough for row-range skipping

// Levels and compact values of a column chunk, with per-row starts for cutting pages.
struct Shredded {
  std::vector<int16_t> rep;
  std::vector<int16_t> def;
  std::vector<int64_t> row_entry{0};  // level entries before row r
  std::vector<int64_t> row_value{0};  // values before row r
  Buffer fixed;                       // fixed-width values
  std::vector<std::string_view> strings;
  int64_t num_entries = 0;
  int64_t num_values = 0;
};

class Shredder {
 public:
  Shredder(const ColumnDescriptor& d, Shredded* out)
      : d_(d), out_(out), width_(d.type == PhysicalType::kByteArray ? 0 : fixed_width(d.type)) {}

  void add(const ColumnSegment& seg) {
    const ColumnData& c = *seg.column;
    if (d_.max_rep == 0) {
      add_flat(c, seg.row_begin, seg.row_end);
      return;
    }
    for (int64_t row = seg.row_begin; row < seg.row_end; ++row) {
      slot(c, 0, row, 0);
      out_->row_entry.push_back(out_->num_entries);
      out_->row_value.push_back(out_->num_values);
    }
  }

 private:
  void push_level(int16_t r, int16_t d) {
    if (d_.max_rep > 0) out_->rep.push_back(r);
    if (d_.max_def > 0) out_->def.push_back(d);
    ++out_->num_entries;
  }

  void push_value(const ColumnData& c, int64_t s) {
    if (width_ > 0) {
      std::memcpy(out_->fixed.grow(static_cast<size_t>(width_)), c.values.data() + s * width_, static_cast<size_t>(width_));
    } else {
      out_->strings.push_back(c.bytes(s));
    }
    ++out_->num_values;
  }

  void slot(const ColumnData& c, int k, int64_t s, int16_t r) {
    const int levels = d_.max_rep;
    if (k == levels) {
      bool valid = !c.is_null(s);
      push_level(r, valid ? d_.max_def : static_cast<int16_t>(d_.max_def - 1));
      if (valid) push_value(c, s);
      return;
    }
    const ListLevel& lv = c.lists[static_cast<size_t>(k)];
    const int16_t rd = d_.repeated_def[static_cast<size_t>(k)];
    if (lv.is_null(s)) {
      push_level(r, static_cast<int16_t>(rd - 2));
      return;
    }
    int64_t b = lv.offsets[static_cast<size_t>(s)], e = lv.offsets[static_cast<size_t>(s) + 1];
    if (b == e) {
      push_level(r, static_cast<int16_t>(rd - 1));
      return;
    }
    for (int64_t j = b; j < e; ++j) slot(c, k + 1, j, j == b ? r : static_cast<int16_t>(k + 1));
  }

  void add_flat(const ColumnData& c, int64_t b, int64_t e) {
    const int64_t n = e - b;
    const bool nullable = d_.max_def > 0;
    size_t old = out_->row_entry.size();
    out_->row_entry.resize(old + static_cast<size_t>(n));
    out_->row_value.resize(old + static_cast<size_t>(n));
    if (nullable) out_->def.reserve(out_->def.size() + static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      int64_t s = b + i;
      bool valid = !c.is_null(s);
      if (nullable) out_->def.push_back(valid ? 1 : 0);
      if (valid) {
        if (width_ > 0) {
          std::memcpy(out_->fixed.grow(static_cast<size_t>(width_)), c.values.data() + s * width_,
                      static_cast<size_t>(width_));
        } else {
          out_->strings.push_back(c.bytes(s));
        }
        ++out_->num_values;
      }
      ++out_->num_entries;
      out_->row_entry[old + static_cast<size_t>(i)] = out_->num_entries;
      out_->row_value[old + static_cast<size_t>(i)] = out_->num_values;
    }
  }

  const ColumnDescriptor& d_;
  Shredded* out_;
  int width_;
};

// Open-addressing dictionary builder. Gives up (returns false) once the PLAIN size of the
// distinct values passes max_bytes.
class DictBuilder {
 public:
  explicit DictBuilder(size_t max_bytes) : max_bytes_(max_bytes) { resize(1024); }

  bool build_fixed(const uint8_t* values, int64_t n, int width, std::vector<uint32_t>* indices) {
    indices->resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      uint64_t key = 0;
      std::memcpy(&key, values + i * width, static_cast<size_t>(width));
      uint64_t h = key * 0x9E3779B97F4A7C15ull;
      uint32_t idx = lookup(h, [&](uint32_t e) { return fixed_keys_[e] == key; });
      if (idx == kEmpty) {
        idx = static_cast<uint32_t>(fixed_keys_.size());
        fixed_keys_.push_back(key);
        plain_bytes_ += static_cast<size_t>(width);
        insert(h, idx);
        if (plain_bytes_ > max_bytes_) return false;
      }
      (*indices)[static_cast<size_t>(i)] = idx;
    }
    return true;
  }

  bool build_strings(const std::string_view* values, int64_t n, std::vector<uint32_t>* indices) {
    indices->resize(static_cast<size_t>(n));
    std::hash<std::string_view> hasher;
    for (int64_t i = 0; i < n; ++i) {
      const std::string_view key = values[i];
      uint64_t h = hasher(key) * 0x9E3779B97F4A7C15ull;
      uint32_t idx = lookup(h, [&](uint32_t e) { return str_keys_[e] == key; });
      if (idx == kEmpty) {
        idx = static_cast<uint32_t>(str_keys_.size());
        str_keys_.push_back(key);
        plain_bytes_ += 4 + key.size();
        insert(h, idx);
        if (plain_bytes_ > max_bytes_) return false;
      }
      (*indices)[static_cast<size_t>(i)] = idx;
    }
    return true;
  }

  int64_t size() const { return static_cast<int64_t>(std::max(fixed_keys_.size(), str_keys_.size())); }
  const std::vector<uint64_t>& fixed_keys() const { return fixed_keys_; }
  const std::vector<std::string_view>& str_keys() const { return str_keys_; }

 private:
  static constexpr uint32_t kEmpty = 0xffffffffu;

  template <typename Eq>
  uint32_t lookup(uint64_t h, Eq eq) const {
    for (size_t p = static_cast<size_t>(h >> shift_);; p = (p + 1) & mask_) {
      uint32_t e = slots_[p];
      if (e == kEmpty) return kEmpty;
      if (hashes_[p] == h && eq(e)) return e;
    }
  }
  void insert(uint64_t h, uint32_t idx) {
    if ((count_ + 1) * 2 > slots_.size()) grow();
    place(h, idx);
    ++count_;
  }
  void place(uint64_t h, uint32_t idx) {
    size_t p = static_cast<size_t>(h >> shift_);
    while (slots_[p] != kEmpty) p = (p + 1) & mask_;
    slots_[p] = idx;
    hashes_[p] = h;
  }
  void resize(size_t n) {
    slots_.assign(n, kEmpty);
    hashes_.assign(n, 0);
    mask_ = n - 1;
    shift_ = 64 - bits::bit_width_of(n - 1);
  }
  void grow() {
    std::vector<uint32_t> old_slots = std::move(slots_);
    std::vector<uint64_t> old_hashes = std::move(hashes_);
    resize(old_slots.size() * 2);
    for (size_t i = 0; i < old_slots.size(); ++i) {
      if (old_slots[i] != kEmpty) place(old_hashes[i], old_slots[i]);
    }
  }

  size_t max_bytes_;
  size_t plain_bytes_ = 0;
  std::vector<uint32_t> slots_;
  std::vector<uint64_t> hashes_;
  size_t mask_ = 0;
  int shift_ = 0;
  size_t count_ = 0;
  std::vector<uint64_t> fixed_keys_;
  std::vector<std::string_view> str_keys_;
};

void append_levels(const int16_t* levels, int64_t n, int16_t max_level, std::string* out) {
  size_t len_pos = out->size();
  out->append(4, '\0');
  rle_encode(levels, n, bits::bit_width_of(static_cast<uint64_t>(max_level)), out);
  uint32_t len = static_cast<uint32_t>(out->size() - len_pos - 4);
  std::memcpy(out->data() + len_pos, &len, 4);
}

// Compresses `raw` and appends header + body to chunk->bytes.
void emit_page(PageHeader header, const std::string& raw, const WriterOptions& options, std::string* scratch,
               EncodedChunk* chunk) {
  scratch->clear();
  compress(options.compression, reinterpret_cast<const uint8_t*>(raw.data()), raw.size(), scratch);
  if (raw.size() > INT32_MAX || scratch->size() > INT32_MAX) {
    throw DataError("parquet writer: a page exceeds 2 GiB; lower page_bytes");
  }
  header.uncompressed_page_size = static_cast<int32_t>(raw.size());
  header.compressed_page_size = static_cast<int32_t>(scratch->size());
  if (options.page_crc) header.crc = crc32(reinterpret_cast<const uint8_t*>(scratch->data()), scratch->size());
  std::string head;
  encode_page_header(header, &head);
  chunk->meta.total_uncompressed_size += static_cast<int64_t>(head.size() + raw.size());
  chunk->meta.total_compressed_size += static_cast<int64_t>(head.size() + scratch->size());
  chunk->bytes += head;
  chunk->bytes += *scratch;
}

}  // namespace

EncodedChunk encode_column_chunk(const ColumnDescriptor& column, const std::vector<ColumnSegment>& segments,
                                 const WriterOptions& options) {
  Shredded s;
  Shredder shredder(column, &s);
  for (const auto& seg : segments) shredder.add(seg);
  const int64_t rows = static_cast<int64_t>(s.row_entry.size()) - 1;
  const int width = column.type == PhysicalType::kByteArray ? 0 : fixed_width(column.type);

  EncodedChunk chunk;
  ColumnMetaData& m = chunk.meta;
  m.type = column.type;
  m.path_in_schema = column.path;
  m.codec = options.compression;
  m.num_values = s.num_entries;
  if (column.max_rep == 0 && column.max_def > 0) {
    Statistics st;
    st.null_count = s.num_entries - s.num_values;
    m.statistics = st;
  }

  // Dictionary encoding when it stays small.
  std::vector<uint32_t> indices;
  bool use_dict = options.dictionary && column.type != PhysicalType::kBoolean && s.num_values > 0;
  DictBuilder dict(static_cast<size_t>(std::max<int64_t>(options.dictionary_max_bytes, 0)));
  if (use_dict) {
    use_dict = width > 0 ? dict.build_fixed(s.fixed.data(), s.num_values, width, &indices)
                         : dict.build_strings(s.strings.data(), s.num_values, &indices);
  }
  std::string raw, scratch;
  int index_bits = 1;
  if (use_dict) {
    raw.clear();
    if (width > 0) {
      for (uint64_t key : dict.fixed_keys()) raw.append(reinterpret_cast<const char*>(&key), static_cast<size_t>(width));
    } else {
      encode_plain_byte_array(dict.str_keys().data(), dict.size(), &raw);
    }
    PageHeader h;
    h.type = PageType::kDictionaryPage;
    DictionaryPageHeader dh;
    dh.num_values = static_cast<int32_t>(dict.size());
    dh.encoding = Encoding::kPlain;
    h.dictionary_page_header = dh;
    m.dictionary_page_offset = 0;
    emit_page(h, raw, options, &scratch, &chunk);
    index_bits = std::max(1, bits::bit_width_of(static_cast<uint64_t>(dict.size() - 1)));
  }
  m.data_page_offset = static_cast<int64_t>(chunk.bytes.size());
  const Encoding value_encoding = use_dict ? Encoding::kRleDictionary : Encoding::kPlain;

  // Pages: whole rows, up to page_bytes of estimated encoded values or kMaxPageRows rows.
  int64_t row = 0;
  while (row < rows) {
    int64_t end = row;
    int64_t bytes = 0;
    while (end < rows && (end == row || (bytes < options.page_bytes && end - row < kMaxPageRows))) {
      int64_t v0 = s.row_value[static_cast<size_t>(end)], v1 = s.row_value[static_cast<size_t>(end) + 1];
      int64_t e0 = s.row_entry[static_cast<size_t>(end)], e1 = s.row_entry[static_cast<size_t>(end) + 1];
      if (use_dict) {
        bytes += (v1 - v0) * index_bits / 8 + 1;
      } else if (width > 0) {
        bytes += (v1 - v0) * width;
      } else {
        for (int64_t v = v0; v < v1; ++v) bytes += 4 + static_cast<int64_t>(s.strings[static_cast<size_t>(v)].size());
      }
      bytes += (e1 - e0) / 4;
      ++end;
    }
    const int64_t e0 = s.row_entry[static_cast<size_t>(row)], e1 = s.row_entry[static_cast<size_t>(end)];
    const int64_t v0 = s.row_value[static_cast<size_t>(row)], v1 = s.row_value[static_cast<size_t>(end)];
    raw.clear();
    if (column.max_rep > 0) append_levels(s.rep.data() + e0, e1 - e0, column.max_rep, &raw);
    if (column.max_def > 0) append_levels(s.def.data() + e0, e1 - e0, column.max_def, &raw);
    if (use_dict) {
      raw.push_back(static_cast<char>(index_bits));
      rle_encode(indices.data() + v0, v1 - v0, index_bits, &raw);
    } else if (column.type == PhysicalType::kBoolean) {
      encode_plain_boolean(s.fixed.data() + v0, v1 - v0, &raw);
    } else if (width > 0) {
      raw.append(reinterpret_cast<const char*>(s.fixed.data()) + v0 * width, static_cast<size_t>((v1 - v0) * width));
    } else {
      encode_plain_byte_array(s.strings.data() + v0, v1 - v0, &raw);
    }
    PageHeader h;
    h.type = PageType::kDataPage;
    DataPageHeader dh;
    dh.num_values = static_cast<int32_t>(e1 - e0);
    dh.encoding = value_encoding;
    dh.definition_level_encoding = Encoding::kRle;
    dh.repetition_level_encoding = Encoding::kRle;
    h.data_page_header = dh;
    PageLocation loc;
    loc.offset = static_cast<int64_t>(chunk.bytes.size());
    loc.first_row_index = row;
    emit_page(h, raw, options, &scratch, &chunk);
    loc.compressed_page_size = static_cast<int32_t>(static_cast<int64_t>(chunk.bytes.size()) - loc.offset);
    chunk.pages.push_back(loc);
    row = end;
  }
  m.encodings = use_dict ? std::vector<Encoding>{Encoding::kPlain, Encoding::kRle, Encoding::kRleDictionary}
                         : std::vector<Encoding>{Encoding::kPlain, Encoding::kRle};
  return chunk;
}

}  // namespace tzrec::parquet
