#include "arrow/ipc_writer.h"

#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "arrow/flatbuffer.h"
#include "arrow/format.h"
#include "base/error.h"

namespace tzrec::arrow {
namespace {

using parquet::ColumnData;
using parquet::PhysicalType;

// IEEE 754 half precision of a float, rounded to nearest even (overflow to infinity, NaN kept).
uint16_t float_to_float16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) {
    return static_cast<uint16_t>(sign | 0x7c00u | (mant != 0 ? 0x200u | (mant >> 13) : 0));
  }
  const int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u) != 0)) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u) != 0)) {
    ++half;  // a carry rounds up the exponent
  }
  return static_cast<uint16_t>(sign | half);
}

class BodyWriter {
 public:
  BodyWriter(BodyCodec codec, std::string column) : codec_(codec), column_(std::move(column)) {}

  [[noreturn]] void fail(const std::string& message) const {
    throw DataError(fmt::format("Arrow writer: column '{}': {}", column_, message));
  }
  void set_column(const std::string& name) { column_ = name; }

  void node(int64_t length, int64_t null_count) {
    append_i64(&nodes_, length);
    append_i64(&nodes_, null_count);
    ++node_count_;
  }

  void buffer(const void* data, size_t size) {
    const int64_t offset = static_cast<int64_t>(body_.size());
    const auto* p = static_cast<const uint8_t*>(data);
    if (codec_ == BodyCodec::kNone || size == 0) {
      body_.append(reinterpret_cast<const char*>(p), size);
    } else {
      std::string packed;
      compress_buffer(codec_, p, size, &packed);
      if (packed.size() < size) {
        append_i64(&body_, static_cast<int64_t>(size));
        body_ += packed;
      } else {
        append_i64(&body_, -1);
        body_.append(reinterpret_cast<const char*>(p), size);
      }
    }
    append_i64(&buffers_, offset);
    append_i64(&buffers_, static_cast<int64_t>(body_.size()) - offset);
    ++buffer_count_;
    body_.append((8 - body_.size() % 8) % 8, '\0');
  }

  // The validity bitmap of `validity` (0/1 per slot; empty: all valid): no bytes when there is no
  // null. Returns the null count.
  int64_t validity(const std::vector<uint8_t>& validity, int64_t length, bool nullable,
                   const char* what) {
    int64_t nulls = 0;
    if (!validity.empty()) {
      if (static_cast<int64_t>(validity.size()) != length) {
        fail(fmt::format("{} validity has {} entries for {} slots", what, validity.size(), length));
      }
      for (uint8_t v : validity) nulls += v == 0 ? 1 : 0;
    }
    if (nulls > 0 && !nullable) {
      fail(fmt::format("{} has {} null(s) but its field is not nullable", what, nulls));
    }
    if (nulls == 0) {
      pending_bitmap_.clear();
      return 0;
    }
    pending_bitmap_.assign(static_cast<size_t>((length + 7) / 8), 0);
    for (int64_t i = 0; i < length; ++i) {
      if (validity[static_cast<size_t>(i)] != 0) {
        pending_bitmap_[static_cast<size_t>(i >> 3)] |= 1u << (i & 7);
      }
    }
    return nulls;
  }
  void bitmap_buffer() { buffer(pending_bitmap_.data(), pending_bitmap_.size()); }

  const std::string& body() const { return body_; }
  std::string nodes() const { return nodes_; }
  std::string buffers() const { return buffers_; }
  size_t node_count() const { return node_count_; }
  size_t buffer_count() const { return buffer_count_; }
  BodyCodec codec() const { return codec_; }

 private:
  static void append_i64(std::string* s, int64_t v) {
    s->append(reinterpret_cast<const char*>(&v), 8);
  }

  BodyCodec codec_;
  std::string column_;
  std::string body_;
  std::string nodes_;    // FieldNode structs
  std::string buffers_;  // Buffer structs
  size_t node_count_ = 0;
  size_t buffer_count_ = 0;
  std::vector<uint8_t> pending_bitmap_;
};

void check_offsets(BodyWriter& w, const std::vector<int64_t>& offsets, int64_t length,
                   const char* what) {
  if (static_cast<int64_t>(offsets.size()) != length + 1) {
    w.fail(fmt::format("{} has {} offsets for {} slots", what, offsets.size(), length));
  }
  if (offsets[0] != 0) w.fail(fmt::format("{} offsets start at {}", what, offsets[0]));
  for (size_t i = 1; i < offsets.size(); ++i) {
    if (offsets[i] < offsets[i - 1]) {
      w.fail(fmt::format("{} offsets decrease at slot {}", what, i - 1));
    }
  }
}

void offsets_buffer(BodyWriter& w, const std::vector<int64_t>& offsets, bool wide,
                    const char* what) {
  if (wide) {
    w.buffer(offsets.data(), offsets.size() * 8);
    return;
  }
  if (offsets.back() > std::numeric_limits<int32_t>::max()) {
    w.fail(fmt::format("{} offsets reach {}, beyond int32 offsets (use a large_ type)", what,
                       offsets.back()));
  }
  std::vector<int32_t> narrow(offsets.begin(), offsets.end());
  w.buffer(narrow.data(), narrow.size() * 4);
}

template <typename In, typename Out>
void write_converted(BodyWriter& w, const ColumnData& c, int64_t slots, const ArrowType& type,
                     bool check_range) {
  std::vector<Out> out(static_cast<size_t>(slots));
  const In* in = c.data<In>();
  for (int64_t i = 0; i < slots; ++i) {
    const In v = in[i];
    if (check_range && !c.is_null(i) &&
        (v < static_cast<In>(std::numeric_limits<Out>::min()) ||
         v > static_cast<In>(std::numeric_limits<Out>::max()))) {
      w.fail(fmt::format("value {} at slot {} does not fit {}", v, i, type.to_string()));
    }
    out[static_cast<size_t>(i)] = static_cast<Out>(v);
  }
  w.buffer(out.data(), out.size() * sizeof(Out));
}

void write_leaf(BodyWriter& w, const ColumnData& c, int64_t slots, const ArrowType& type,
                bool nullable, const char* what) {
  const int64_t nulls = w.validity(c.validity, slots, nullable, what);
  w.node(slots, nulls);
  w.bitmap_buffer();
  const PhysicalType pt = c.type();
  auto mismatch = [&]() {
    return fmt::format("{} are Parquet {} values, which cannot be written as Arrow {}", what,
                       parquet::to_string(pt), type.to_string());
  };
  if (pt == PhysicalType::kByteArray) {
    if (type.id != TypeId::kUtf8 && type.id != TypeId::kLargeUtf8 && type.id != TypeId::kBinary &&
        type.id != TypeId::kLargeBinary) {
      w.fail(mismatch());
    }
    check_offsets(w, c.offsets, slots, what);
    if (static_cast<uint64_t>(c.offsets.back()) > c.values.size()) {
      w.fail(fmt::format("{} offsets reach {} but the column holds {} bytes", what,
                         c.offsets.back(), c.values.size()));
    }
    offsets_buffer(w, c.offsets, type.id == TypeId::kLargeUtf8 || type.id == TypeId::kLargeBinary,
                   what);
    w.buffer(c.values.data(), static_cast<size_t>(c.offsets.back()));
    return;
  }
  const int width = c.value_width();
  if (width <= 0 || c.values.size() / static_cast<size_t>(width) < static_cast<size_t>(slots)) {
    w.fail(fmt::format("{} has {} value bytes for {} slots of {} bytes", what, c.values.size(),
                       slots, width));
  }
  switch (pt) {
    case PhysicalType::kBoolean: {
      if (type.id != TypeId::kBool) w.fail(mismatch());
      std::vector<uint8_t> bits(static_cast<size_t>((slots + 7) / 8), 0);
      const uint8_t* v = c.data<uint8_t>();
      for (int64_t i = 0; i < slots; ++i) {
        if (v[i] != 0) bits[static_cast<size_t>(i >> 3)] |= 1u << (i & 7);
      }
      w.buffer(bits.data(), bits.size());
      return;
    }
    case PhysicalType::kInt32:
      switch (type.id) {
        case TypeId::kInt8: return write_converted<int32_t, int8_t>(w, c, slots, type, true);
        case TypeId::kInt16: return write_converted<int32_t, int16_t>(w, c, slots, type, true);
        case TypeId::kUInt8: return write_converted<int32_t, uint8_t>(w, c, slots, type, true);
        case TypeId::kUInt16: return write_converted<int32_t, uint16_t>(w, c, slots, type, true);
        case TypeId::kInt32:
        case TypeId::kUInt32: return w.buffer(c.values.data(), static_cast<size_t>(slots) * 4);
        default: w.fail(mismatch());
      }
    case PhysicalType::kInt64:
      switch (type.id) {
        case TypeId::kInt64:
        case TypeId::kUInt64: return w.buffer(c.values.data(), static_cast<size_t>(slots) * 8);
        case TypeId::kUInt32: return write_converted<int64_t, uint32_t>(w, c, slots, type, true);
        default: w.fail(mismatch());
      }
    case PhysicalType::kFloat:
      if (type.id == TypeId::kFloat32) {
        return w.buffer(c.values.data(), static_cast<size_t>(slots) * 4);
      }
      if (type.id == TypeId::kFloat16) {
        std::vector<uint16_t> half(static_cast<size_t>(slots));
        for (int64_t i = 0; i < slots; ++i) {
          half[static_cast<size_t>(i)] = float_to_float16(c.data<float>()[i]);
        }
        return w.buffer(half.data(), half.size() * 2);
      }
      w.fail(mismatch());
    case PhysicalType::kDouble:
      if (type.id == TypeId::kFloat64) {
        return w.buffer(c.values.data(), static_cast<size_t>(slots) * 8);
      }
      w.fail(mismatch());
    default: w.fail(mismatch());
  }
}

// Number of slots of list level k (level 0: the rows).
int64_t level_length(const ColumnData& c, size_t k) {
  return k == 0 ? c.num_rows : c.lists[k - 1].offsets.back();
}

void write_lists(BodyWriter& w, const ColumnData& c, const ArrowType& type, bool nullable,
                 size_t level) {
  if (!type.is_list()) {
    write_leaf(w, c, level_length(c, level), type, nullable, "values");
    return;
  }
  if (level >= c.lists.size()) {
    w.fail(fmt::format("the field's type {} has more list levels than the column ({})",
                       type.to_string(), c.lists.size()));
  }
  const int64_t n = level_length(c, level);
  const parquet::ListLevel& l = c.lists[level];
  check_offsets(w, l.offsets, n, "list");
  const int64_t nulls = w.validity(l.validity, n, nullable, "list");
  w.node(n, nulls);
  w.bitmap_buffer();
  offsets_buffer(w, l.offsets, type.id == TypeId::kLargeList, "list");
  write_lists(w, c, type.element().type, type.element().nullable, level + 1);
}

void write_column(BodyWriter& w, const ArrowField& f, const ArrowColumn& col, int64_t rows) {
  w.set_column(f.name);
  check_supported(f, "");
  if (col.values.num_rows != rows) {
    w.fail(fmt::format("the column has {} rows, the batch {}", col.values.num_rows, rows));
  }
  if (f.type.id == TypeId::kMap) {
    if (!col.map_values) {
      w.fail(fmt::format("the field is a {} but the column has no map values", f.type.to_string()));
    }
    const ColumnData& keys = col.values;
    const ColumnData& values = *col.map_values;
    if (keys.lists.size() != 1 || values.lists.size() != 1) {
      w.fail("map keys and values need one list level each");
    }
    if (keys.lists[0].offsets != values.lists[0].offsets) {
      w.fail("map keys and values have different offsets");
    }
    const parquet::ListLevel& l = keys.lists[0];
    check_offsets(w, l.offsets, rows, "map");
    const int64_t nulls = w.validity(l.validity, rows, f.nullable, "map");
    w.node(rows, nulls);
    w.bitmap_buffer();
    offsets_buffer(w, l.offsets, false, "map");
    const int64_t entries = l.offsets.back();
    w.node(entries, 0);
    w.buffer(nullptr, 0);  // the entries struct: no nulls
    write_leaf(w, keys, entries, f.type.key().type, false, "map keys");
    write_leaf(w, values, entries, f.type.value().type, f.type.value().nullable, "map values");
    return;
  }
  if (col.map_values) {
    w.fail(fmt::format("the column is a map but the field is a {}", f.type.to_string()));
  }
  size_t depth = 0;
  for (const ArrowType* t = &f.type; t->is_list(); t = &t->element().type) ++depth;
  if (col.values.lists.size() != depth) {
    w.fail(fmt::format("the column has {} list level(s), the field's type {} {}",
                       col.values.lists.size(), f.type.to_string(), depth));
  }
  write_lists(w, col.values, f.type, f.nullable, 0);
}

std::string encapsulate(const std::string& metadata, const std::string& body) {
  std::string out;
  const uint32_t marker = 0xFFFFFFFFu;
  const int32_t length = static_cast<int32_t>((metadata.size() + 7) / 8 * 8);
  out.append(reinterpret_cast<const char*>(&marker), 4);
  out.append(reinterpret_cast<const char*>(&length), 4);
  out += metadata;
  out.append(static_cast<size_t>(length) - metadata.size(), '\0');
  out += body;
  return out;
}

std::string message_metadata(uint8_t header_type, FbBuilder header, int64_t body_length) {
  FbBuilder m;
  m.add_scalar<int16_t>(format::message::kVersion, format::kV5)
      .add_scalar<uint8_t>(format::message::kHeaderType, header_type)
      .add_table(format::message::kHeader, std::move(header))
      .add_scalar<int64_t>(format::message::kBodyLength, body_length);
  return m.finish();
}

}  // namespace

std::string write_schema_message(const ArrowSchema& schema) {
  return encapsulate(message_metadata(format::kHeaderSchema, schema_to_flatbuffer(schema), 0), "");
}

std::string write_record_batch_message(const ArrowSchema& schema, const ArrowBatch& batch,
                                       const WriteOptions& options) {
  if (batch.columns.size() != schema.fields.size()) {
    throw DataError(fmt::format("Arrow writer: the batch has {} column(s), the schema {} ({})",
                                batch.columns.size(), schema.fields.size(), schema.to_string()));
  }
  BodyWriter w(options.compression, "");
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    if (batch.columns[i].name != schema.fields[i].name) {
      throw DataError(
          fmt::format("Arrow writer: column {} is '{}' but the schema's field {} is '{}'", i,
                      batch.columns[i].name, i, schema.fields[i].name));
    }
    write_column(w, schema.fields[i], batch.columns[i], batch.num_rows);
  }
  namespace rb_ids = format::record_batch;
  FbBuilder rb;
  rb.add_scalar<int64_t>(rb_ids::kLength, batch.num_rows)
      .add_structs(rb_ids::kNodes, w.nodes(), w.node_count(), 8)
      .add_structs(rb_ids::kBuffers, w.buffers(), w.buffer_count(), 8);
  if (options.compression != BodyCodec::kNone) {
    FbBuilder compression;
    compression
        .add_scalar<int8_t>(format::body_compression::kCodec,
                            static_cast<int8_t>(options.compression))
        .add_scalar<int8_t>(format::body_compression::kMethod, 0);
    rb.add_table(rb_ids::kCompression, std::move(compression));
  }
  return encapsulate(message_metadata(format::kHeaderRecordBatch, std::move(rb),
                                      static_cast<int64_t>(w.body().size())),
                     w.body());
}

std::string end_of_stream_marker() { return std::string("\xff\xff\xff\xff\0\0\0\0", 8); }

std::string write_ipc_stream(const ArrowSchema& schema, const std::vector<ArrowBatch>& batches,
                             const WriteOptions& options) {
  std::string out = write_schema_message(schema);
  for (const auto& b : batches) out += write_record_batch_message(schema, b, options);
  out += end_of_stream_marker();
  return out;
}

}  // namespace tzrec::arrow
