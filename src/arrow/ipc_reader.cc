#include "arrow/ipc_reader.h"

#include <algorithm>
#include <memory>
#include <unordered_set>

#include <fmt/format.h>

#include "arrow/body_compression.h"
#include "arrow/flatbuffer.h"
#include "arrow/format.h"
#include "base/error.h"
#include "parquet/types.h"

namespace tzrec::arrow {
namespace {

namespace ids = format;

const char* header_name(uint8_t type) {
  switch (type) {
    case ids::kHeaderSchema: return "Schema";
    case ids::kHeaderDictionaryBatch: return "DictionaryBatch";
    case ids::kHeaderRecordBatch: return "RecordBatch";
    case ids::kHeaderTensor: return "Tensor";
    case ids::kHeaderSparseTensor: return "SparseTensor";
    default: return "unknown";
  }
}

// Where errors happen: "<context>: <message description>".
class Where {
 public:
  explicit Where(std::string prefix) : prefix_(std::move(prefix)) {}
  [[noreturn]] void fail(const std::string& message) const {
    throw DataError(prefix_ + ": " + message);
  }
  const std::string& prefix() const { return prefix_; }

 private:
  std::string prefix_;
};

struct Message {
  bool end_marker = false;
  int16_t version = ids::kV5;
  uint8_t header_type = 0;
  FbTable header;
  std::string_view body;
  size_t end = 0;  // offset just after the message
};

Message read_message(std::string_view bytes, size_t pos, const Where& where) {
  const size_t left = bytes.size() - pos;
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data()) + pos;
  if (left < 4) where.fail(fmt::format("truncated: {} byte(s) left where a message starts", left));
  int64_t meta_len = 0;
  size_t meta_start = 0;
  if (load_le<uint32_t>(p) == ids::kContinuation) {
    if (left < 8) {
      where.fail(fmt::format("truncated: {} byte(s) left where a message starts", left));
    }
    meta_len = load_le<int32_t>(p + 4);
    meta_start = pos + 8;
  } else {
    meta_len = load_le<int32_t>(p);  // legacy framing: the length without the continuation marker
    meta_start = pos + 4;
  }
  Message m;
  if (meta_len == 0) {
    m.end_marker = true;
    m.end = meta_start;
    return m;
  }
  if (meta_len < 0) where.fail(fmt::format("negative metadata length {}", meta_len));
  if (static_cast<uint64_t>(meta_len) > bytes.size() - meta_start) {
    where.fail(fmt::format("metadata length {} runs past the end of the data ({} bytes left)",
                           meta_len, bytes.size() - meta_start));
  }
  const size_t body_start = meta_start + static_cast<size_t>(meta_len);
  try {
    const FbTable msg = FbTable::root(reinterpret_cast<const uint8_t*>(bytes.data()) + meta_start,
                                      static_cast<size_t>(meta_len));
    m.version = msg.scalar<int16_t>(ids::message::kVersion, 0);
    if (m.version > ids::kV5 || m.version < 0) {
      where.fail(fmt::format("unknown metadata version {} (V4 and V5 are read)", m.version));
    }
    if (m.version < ids::kV4) {
      where.fail(
          fmt::format("metadata version V{} is not supported (V4 and V5 are)", m.version + 1));
    }
    m.header_type = msg.scalar<uint8_t>(ids::message::kHeaderType, 0);
    const std::optional<FbTable> header = msg.table(ids::message::kHeader);
    if (!header) {
      where.fail(fmt::format("message of type {} without its header", header_name(m.header_type)));
    }
    m.header = *header;
    const int64_t body_len = msg.scalar<int64_t>(ids::message::kBodyLength, 0);
    if (body_len < 0) where.fail(fmt::format("negative body length {}", body_len));
    if (static_cast<uint64_t>(body_len) > bytes.size() - body_start) {
      where.fail(fmt::format("body length {} runs past the end of the data ({} bytes left)",
                             body_len, bytes.size() - body_start));
    }
    m.body = bytes.substr(body_start, static_cast<size_t>(body_len));
    m.end = body_start + static_cast<size_t>(body_len);
  } catch (const FormatError& e) {
    where.fail(std::string("malformed Message metadata: ") + e.what());
  }
  return m;
}

// Slots [first, second) of an array, ascending and disjoint.
using Ranges = std::vector<std::pair<int64_t, int64_t>>;

void add_range(Ranges* r, int64_t b, int64_t e) {
  if (b == e) return;
  if (!r->empty() && r->back().second == b) {
    r->back().second = e;
  } else {
    r->emplace_back(b, e);
  }
}

int64_t range_count(const Ranges& r) {
  int64_t n = 0;
  for (const auto& [b, e] : r) n += e - b;
  return n;
}

struct Node {
  int64_t length = 0;
  int64_t null_count = 0;
};

struct Span {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

struct Bitmap {
  const uint8_t* bits = nullptr;  // nullptr: all valid
  bool valid(int64_t i) const { return bits == nullptr || ((bits[i >> 3] >> (i & 7)) & 1) != 0; }
};

// Offsets of a list / string array (int32 or int64), as take_offsets() checked them.
struct Offsets {
  const uint8_t* data = nullptr;  // nullptr: an empty array without an offsets buffer
  bool wide = false;
  int64_t operator[](int64_t i) const {
    if (data == nullptr) return 0;
    return wide ? load_le<int64_t>(data + 8 * i) : load_le<int32_t>(data + 4 * i);
  }
};

// Field nodes, buffers and variadic buffer counts one field type takes.
struct Layout {
  size_t nodes = 0;
  size_t buffers = 0;
  size_t variadic = 0;  // fields with variadic buffers (their count comes from the batch)
};

class BatchDecoder {
 public:
  BatchDecoder(const FbTable& rb, std::string_view body, int16_t version, Where where)
      : body_(body), version_(version), where_(std::move(where)) {
    try {
      length_ = rb.scalar<int64_t>(ids::record_batch::kLength, 0);
      nodes_ = rb.vector(ids::record_batch::kNodes, 16);
      buffers_ = rb.vector(ids::record_batch::kBuffers, 16);
      variadic_ = rb.vector(ids::record_batch::kVariadicCounts, 8);
      if (auto c = rb.table(ids::record_batch::kCompression)) {
        const int8_t codec = c->scalar<int8_t>(ids::body_compression::kCodec, 0);
        const int8_t method = c->scalar<int8_t>(ids::body_compression::kMethod, 0);
        if (codec != 0 && codec != 1) fail(fmt::format("unknown body compression codec {}", codec));
        if (method != 0) fail(fmt::format("unknown body compression method {}", method));
        codec_ = static_cast<BodyCodec>(codec);
      }
    } catch (const FormatError& e) {
      fail(std::string("malformed RecordBatch metadata: ") + e.what());
    }
    if (length_ < 0) fail(fmt::format("negative record batch length {}", length_));
  }

  ArrowBatch decode(const ArrowSchema& schema, const std::vector<bool>& selected,
                    std::vector<ArrowColumn> shapes) {
    check_layout(schema);
    ArrowBatch out;
    out.num_rows = length_;
    size_t next_shape = 0;
    for (size_t i = 0; i < schema.fields.size(); ++i) {
      const ArrowField& f = schema.fields[i];
      column_ = f.name;
      if (!selected[i]) {
        skip(f.type);
        continue;
      }
      ArrowColumn col = std::move(shapes[next_shape++]);
      const Node top = peek_node();
      if (top.length != length_) {
        fail(fmt::format("its array has {} values but the record batch has {} rows", top.length,
                         length_));
      }
      col.values.num_rows = length_;
      if (f.type.id == TypeId::kMap) {
        decode_map(f, &col);
      } else {
        decode_levels(f.type, f.nullable, 0, {{0, length_}}, &col.values);
      }
      out.columns.push_back(std::move(col));
    }
    column_.clear();
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    if (column_.empty()) where_.fail(message);
    where_.fail(fmt::format("column '{}': {}", column_, message));
  }

  // ---- layout ----

  bool add_layout(const ArrowType& t, Layout* l) const {
    l->nodes += 1;
    size_t own = 2;
    bool walk_children = true;
    switch (t.id) {
      case TypeId::kNull: own = 0; break;
      case TypeId::kUtf8:
      case TypeId::kLargeUtf8:
      case TypeId::kBinary:
      case TypeId::kLargeBinary:
      case TypeId::kListView:
      case TypeId::kLargeListView: own = 3; break;
      case TypeId::kStruct:
      case TypeId::kFixedSizeList: own = 1; break;
      case TypeId::kSparseUnion: own = version_ < ids::kV5 ? 2 : 1; break;
      case TypeId::kDenseUnion: own = version_ < ids::kV5 ? 3 : 2; break;
      case TypeId::kRunEndEncoded: own = 0; break;
      case TypeId::kUtf8View:
      case TypeId::kBinaryView: l->variadic += 1; break;
      case TypeId::kDictionary: walk_children = false; break;  // only the indices are in the batch
      case TypeId::kUnknown: return false;
      default: break;
    }
    l->buffers += own;
    if (walk_children) {
      for (const auto& c : t.children) {
        if (!add_layout(c.type, l)) return false;
      }
    }
    return true;
  }

  void check_layout(const ArrowSchema& schema) {
    Layout need;
    for (const auto& f : schema.fields) {
      if (!add_layout(f.type, &need)) {
        column_ = f.name;
        check_supported(f, where_.prefix());
      }
    }
    size_t variadic_buffers = 0;
    if (variadic_.size() == need.variadic) {
      for (size_t i = 0; i < variadic_.size(); ++i) {
        const int64_t n = variadic_.scalar<int64_t>(i);
        if (n < 0 || static_cast<uint64_t>(n) > buffers_.size()) {
          fail(fmt::format("invalid variadic buffer count {}", n));
        }
        variadic_buffers += static_cast<size_t>(n);
      }
    }
    need.buffers += variadic_buffers;
    if (nodes_.size() != need.nodes || buffers_.size() != need.buffers ||
        variadic_.size() != need.variadic) {
      fail(fmt::format(
          "the record batch has {} field nodes and {} buffers, but the schema ({} column(s): {}) "
          "describes {} and {}: the message was written with another schema",
          nodes_.size(), buffers_.size(), schema.fields.size(), schema.to_string(), need.nodes,
          need.buffers));
    }
  }

  void skip(const ArrowType& t) {
    Layout l;
    add_layout(t, &l);  // known to succeed (check_layout)
    // Own buffers of every node of the subtree, plus the variadic ones.
    size_t buffers = l.buffers;
    for (size_t i = 0; i < l.variadic; ++i) {
      buffers += static_cast<size_t>(variadic_.scalar<int64_t>(variadic_next_++));
    }
    node_ += l.nodes;
    buffer_ += buffers;
  }

  // ---- nodes and buffers ----

  Node peek_node() const {
    if (node_ >= nodes_.size()) {
      fail("the record batch has fewer field nodes than the schema needs");
    }
    const uint8_t* p = nodes_.element(node_, 16);
    return Node{load_le<int64_t>(p), load_le<int64_t>(p + 8)};
  }

  Node take_node() {
    Node n = peek_node();
    ++node_;
    if (n.length < 0) {
      fail(fmt::format("field node {} has negative length {}", node_ - 1, n.length));
    }
    return n;
  }

  Span take_buffer() {
    if (buffer_ >= buffers_.size()) {
      fail("the record batch has fewer buffers than the schema needs");
    }
    const size_t index = buffer_++;
    const uint8_t* p = buffers_.element(index, 16);
    const int64_t offset = load_le<int64_t>(p);
    const int64_t length = load_le<int64_t>(p + 8);
    if (offset < 0 || length < 0 || static_cast<uint64_t>(offset) > body_.size() ||
        static_cast<uint64_t>(length) > body_.size() - static_cast<uint64_t>(offset)) {
      fail(fmt::format("buffer {} (offset {}, {} bytes) lies outside the message body ({} bytes)",
                       index, offset, length, body_.size()));
    }
    Span raw{reinterpret_cast<const uint8_t*>(body_.data()) + offset, static_cast<size_t>(length)};
    if (codec_ == BodyCodec::kNone || raw.size == 0) return raw;
    if (raw.size < 8) {
      fail(fmt::format("compressed buffer {} of {} bytes is shorter than its 8-byte length prefix",
                       index, raw.size));
    }
    const int64_t uncompressed = load_le<int64_t>(raw.data);
    Span packed{raw.data + 8, raw.size - 8};
    if (uncompressed == -1) return packed;  // stored uncompressed
    if (uncompressed < 0) {
      fail(fmt::format("compressed buffer {} has invalid length prefix {}", index, uncompressed));
    }
    if (static_cast<uint64_t>(uncompressed) > max_decompressed_size(codec_, packed.size)) {
      fail(
          fmt::format("compressed buffer {} claims {} uncompressed bytes from {} {} bytes, more "
                      "than the codec can "
                      "produce",
                      index, uncompressed, packed.size, to_string(codec_)));
    }
    if (uncompressed == 0) return Span{};
    storage_.emplace_back(new uint8_t[static_cast<size_t>(uncompressed)]);
    uint8_t* out = storage_.back().get();
    try {
      decompress_buffer(codec_, packed.data, packed.size, out, static_cast<size_t>(uncompressed));
    } catch (const FormatError& e) {
      fail(fmt::format("compressed buffer {}: {}", index, e.what()));
    }
    return Span{out, static_cast<size_t>(uncompressed)};
  }

  Bitmap take_validity(const Node& n, const char* what) {
    const Span s = take_buffer();
    if (n.null_count == 0) return Bitmap{};  // as Arrow does, the bitmap is then ignored
    if (n.null_count < 0 || n.null_count > n.length) {
      fail(fmt::format("{} array of {} values has null_count {}", what, n.length, n.null_count));
    }
    const uint64_t need = (static_cast<uint64_t>(n.length) + 7) / 8;
    if (s.size == 0) {
      fail(fmt::format("{} array has {} null(s) but no validity bitmap", what, n.null_count));
    }
    if (s.size < need) {
      fail(fmt::format("{} validity bitmap of {} bytes is too short for {} values", what, s.size,
                       n.length));
    }
    return Bitmap{s.data};
  }

  // The offsets buffer of an array of n.length lists or strings: n.length + 1 offsets that start at
  // 0 or more and never decrease.
  Offsets take_offsets(const Node& n, bool wide, const char* what) {
    const Span s = take_buffer();
    Offsets o;
    o.wide = wide;
    if (n.length == 0 && s.size == 0) return o;
    const uint64_t width = wide ? 8 : 4;
    if (s.size / width < static_cast<uint64_t>(n.length) + 1) {
      fail(fmt::format(
          "{} offsets buffer of {} bytes is too short for {} values ({} offsets of {} bytes)", what,
          s.size, n.length, n.length + 1, width));
    }
    o.data = s.data;
    int64_t prev = o[0];
    if (prev < 0) fail(fmt::format("{} offsets start at {}", what, prev));
    for (int64_t i = 1; i <= n.length; ++i) {
      const int64_t cur = o[i];
      if (cur < prev) {
        fail(fmt::format("{} offsets decrease at value {} ({} -> {})", what, i - 1, prev, cur));
      }
      prev = cur;
    }
    return o;
  }

  // ---- columns ----

  // One list level (`type` a list type) or the leaf, for the slots `ranges` of the next node.
  void decode_levels(const ArrowType& type, bool nullable, size_t level, const Ranges& ranges,
                     parquet::ColumnData* out) {
    if (!type.is_list()) {
      decode_leaf(type, nullable, ranges, out);
      return;
    }
    const Node n = take_node();
    check_ranges(ranges, n, "list");
    const Bitmap valid = take_validity(n, "list");
    const Offsets offsets = take_offsets(n, type.id == TypeId::kLargeList, "list");
    const Node child = peek_node();
    if (n.length > 0 && offsets[n.length] > child.length) {
      fail(fmt::format("list offsets reach {} but the list's values array has {} values",
                       offsets[n.length], child.length));
    }
    Ranges child_ranges;
    level_slots(valid, offsets, nullable, ranges, &out->lists[level], &child_ranges, "list");
    decode_levels(type.element().type, type.element().nullable, level + 1, child_ranges, out);
  }

  // Fills one ListLevel from the list (or map) slots `ranges`; collects the child slots of the
  // present lists.
  void level_slots(const Bitmap& valid, const Offsets& offsets, bool nullable, const Ranges& ranges,
                   parquet::ListLevel* level, Ranges* child_ranges, const char* what) {
    const int64_t count = range_count(ranges);
    level->offsets.reserve(level->offsets.size() + static_cast<size_t>(count));
    if (nullable) level->validity.reserve(level->validity.size() + static_cast<size_t>(count));
    for (const auto& [b, e] : ranges) {
      for (int64_t i = b; i < e; ++i) {
        const bool ok = valid.valid(i);
        if (nullable) {
          level->validity.push_back(ok ? 1 : 0);
        } else if (!ok) {
          fail(fmt::format("{}: slot {} is null but the field is not nullable", what, i));
        }
        int64_t elements = 0;
        if (ok) {
          add_range(child_ranges, offsets[i], offsets[i + 1]);
          elements = offsets[i + 1] - offsets[i];
        }
        level->offsets.push_back(level->offsets.back() + elements);
      }
    }
  }

  void check_ranges(const Ranges& ranges, const Node& n, const char* what) const {
    if (!ranges.empty() && ranges.back().second > n.length) {
      fail(fmt::format("{} array has {} values but its parent refers to value {}", what, n.length,
                       ranges.back().second - 1));
    }
  }

  void decode_map(const ArrowField& f, ArrowColumn* col) {
    const Node m = take_node();
    const Bitmap valid = take_validity(m, "map");
    const Offsets offsets = take_offsets(m, false, "map");
    const Node entries = take_node();
    const Bitmap entries_valid = take_validity(entries, "map entries");
    if (m.length > 0 && offsets[m.length] > entries.length) {
      fail(fmt::format("map offsets reach {} but the map's entries array has {} values",
                       offsets[m.length], entries.length));
    }
    Ranges child_ranges;
    level_slots(valid, offsets, f.nullable, {{0, m.length}}, &col->values.lists[0], &child_ranges,
                "map");
    for (const auto& [b, e] : child_ranges) {
      for (int64_t i = b; i < e; ++i) {
        if (!entries_valid.valid(i)) fail(fmt::format("map entries: slot {} is null", i));
      }
    }
    decode_leaf(f.type.key().type, false, child_ranges, &col->values, "map keys");
    col->map_values->num_rows = length_;
    col->map_values->lists[0] = col->values.lists[0];
    decode_leaf(f.type.value().type, f.type.value().nullable, child_ranges, &*col->map_values,
                "map values");
  }

  template <typename In, typename Out, typename Convert>
  void copy_fixed(const Span& values, const Bitmap& valid, const Ranges& ranges,
                  parquet::ColumnData* out, Convert convert) {
    uint8_t* dst = out->values.grow(static_cast<size_t>(range_count(ranges)) * sizeof(Out));
    for (const auto& [b, e] : ranges) {
      for (int64_t i = b; i < e; ++i) {
        Out v{};
        if (valid.valid(i)) {
          v = convert(load_le<In>(values.data + static_cast<size_t>(i) * sizeof(In)));
        }
        std::memcpy(dst, &v, sizeof(Out));
        dst += sizeof(Out);
      }
    }
  }

  template <typename In, typename Out>
  void copy_cast(const Span& values, const Bitmap& valid, const Ranges& ranges,
                 parquet::ColumnData* out) {
    copy_fixed<In, Out>(values, valid, ranges, out, [](In x) { return static_cast<Out>(x); });
  }

  // Bytes per value of a fixed-width leaf type in an Arrow buffer (0: bit-packed bool).
  static size_t arrow_width(TypeId id) {
    switch (id) {
      case TypeId::kInt8:
      case TypeId::kUInt8: return 1;
      case TypeId::kInt16:
      case TypeId::kUInt16:
      case TypeId::kFloat16: return 2;
      case TypeId::kInt32:
      case TypeId::kUInt32:
      case TypeId::kFloat32: return 4;
      default: return 8;
    }
  }

  void decode_leaf(const ArrowType& type, bool nullable, const Ranges& ranges,
                   parquet::ColumnData* out, const char* what = "values") {
    const Node n = take_node();
    check_ranges(ranges, n, what);
    const Bitmap valid = take_validity(n, what);
    // The value buffers, checked to cover the whole array before anything is allocated.
    const bool is_bytes = type.id == TypeId::kUtf8 || type.id == TypeId::kLargeUtf8 ||
                          type.id == TypeId::kBinary || type.id == TypeId::kLargeBinary;
    Span values;
    Offsets offsets;
    if (is_bytes) {
      offsets =
          take_offsets(n, type.id == TypeId::kLargeUtf8 || type.id == TypeId::kLargeBinary, what);
      values = take_buffer();
      if (n.length > 0 && static_cast<uint64_t>(offsets[n.length]) > values.size) {
        fail(fmt::format("{} offsets reach {} but the data buffer has {} bytes", what,
                         offsets[n.length], values.size));
      }
    } else if (type.id == TypeId::kBool) {
      values = take_buffer();
      if (values.size < (static_cast<uint64_t>(n.length) + 7) / 8) {
        fail(fmt::format("{} buffer of {} bytes is too short for {} bool values", what, values.size,
                         n.length));
      }
    } else {
      values = take_buffer();
      const size_t width = arrow_width(type.id);
      if (values.size / width < static_cast<uint64_t>(n.length)) {
        fail(fmt::format("{} buffer of {} bytes is too short for {} {} values", what, values.size,
                         n.length, type.to_string()));
      }
    }
    const int64_t count = range_count(ranges);
    if (nullable) {
      out->validity.reserve(out->validity.size() + static_cast<size_t>(count));
      for (const auto& [b, e] : ranges) {
        for (int64_t i = b; i < e; ++i) out->validity.push_back(valid.valid(i) ? 1 : 0);
      }
    } else if (valid.bits != nullptr) {
      for (const auto& [b, e] : ranges) {
        for (int64_t i = b; i < e; ++i) {
          if (!valid.valid(i)) {
            fail(fmt::format("{}: slot {} is null but the field is not nullable", what, i));
          }
        }
      }
    }
    switch (type.id) {
      case TypeId::kBool: {
        uint8_t* dst = out->values.grow(static_cast<size_t>(count));
        const Bitmap bits{values.data};
        for (const auto& [b, e] : ranges) {
          for (int64_t i = b; i < e; ++i) *dst++ = valid.valid(i) && bits.valid(i) ? 1 : 0;
        }
        return;
      }
      case TypeId::kInt8: return copy_cast<int8_t, int32_t>(values, valid, ranges, out);
      case TypeId::kInt16: return copy_cast<int16_t, int32_t>(values, valid, ranges, out);
      case TypeId::kInt32: return copy_cast<int32_t, int32_t>(values, valid, ranges, out);
      case TypeId::kInt64: return copy_cast<int64_t, int64_t>(values, valid, ranges, out);
      case TypeId::kUInt8: return copy_cast<uint8_t, int32_t>(values, valid, ranges, out);
      case TypeId::kUInt16: return copy_cast<uint16_t, int32_t>(values, valid, ranges, out);
      case TypeId::kUInt32: return copy_cast<uint32_t, int64_t>(values, valid, ranges, out);
      case TypeId::kUInt64: return copy_cast<uint64_t, int64_t>(values, valid, ranges, out);
      case TypeId::kFloat16:
        return copy_fixed<uint16_t, float>(values, valid, ranges, out, parquet::float16_to_float);
      case TypeId::kFloat32: return copy_cast<float, float>(values, valid, ranges, out);
      case TypeId::kFloat64: return copy_cast<double, double>(values, valid, ranges, out);
      case TypeId::kUtf8:
      case TypeId::kLargeUtf8:
      case TypeId::kBinary:
      case TypeId::kLargeBinary: {
        out->offsets.reserve(out->offsets.size() + static_cast<size_t>(count));
        for (const auto& [b, e] : ranges) {
          // Runs of present values are copied at once; null slots are empty.
          int64_t i = b;
          while (i < e) {
            if (!valid.valid(i)) {
              out->offsets.push_back(static_cast<int64_t>(out->values.size()));
              ++i;
              continue;
            }
            int64_t j = i;
            while (j < e && valid.valid(j)) ++j;
            const int64_t base = static_cast<int64_t>(out->values.size()) - offsets[i];
            out->values.append(values.data + offsets[i],
                               static_cast<size_t>(offsets[j] - offsets[i]));
            for (int64_t k = i + 1; k <= j; ++k) out->offsets.push_back(offsets[k] + base);
            i = j;
          }
        }
        return;
      }
      default: fail(fmt::format("Arrow type {} is not a leaf type", type.to_string()));
    }
  }

  std::string_view body_;
  int16_t version_;
  Where where_;
  int64_t length_ = 0;
  FbVector nodes_;
  FbVector buffers_;
  FbVector variadic_;
  BodyCodec codec_ = BodyCodec::kNone;
  size_t node_ = 0;
  size_t buffer_ = 0;
  size_t variadic_next_ = 0;
  std::string column_;
  std::vector<std::unique_ptr<uint8_t[]>> storage_;  // decompressed buffers
};

// The columns of `schema` to decode (checked to be supported) and their empty shapes.
std::pair<std::vector<bool>, std::vector<ArrowColumn>> select_columns(const ArrowSchema& schema,
                                                                      const ReadOptions& options,
                                                                      const std::string& context) {
  if (schema.big_endian) {
    throw NotSupportedError(fmt::format("big-endian Arrow data ({})", context));
  }
  std::unordered_set<std::string> wanted(options.columns.begin(), options.columns.end());
  std::vector<bool> selected(schema.fields.size(), false);
  ArrowSchema sub;
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    const ArrowField& f = schema.fields[i];
    if (!wanted.empty() && wanted.count(f.name) == 0) continue;
    check_supported(f, context);
    selected[i] = true;
    sub.fields.push_back(f);
  }
  return {std::move(selected), empty_columns(sub)};
}

ArrowBatch decode_batch(const Message& m, const ArrowSchema& schema, const ReadOptions& options,
                        const std::string& context, const Where& where) {
  auto [selected, shapes] = select_columns(schema, options, context);
  BatchDecoder decoder(m.header, m.body, m.version, where);
  return decoder.decode(schema, selected, std::move(shapes));
}

ArrowSchema decode_schema(const Message& m, const Where& where) {
  try {
    return schema_from_flatbuffer(m.header);
  } catch (const FormatError& e) {
    where.fail(std::string("malformed Schema metadata: ") + e.what());
  }
}

std::string stream_where(const std::string& context, int index, size_t pos) {
  return fmt::format("{}: Arrow IPC stream, message {} (byte {})", context, index, pos);
}

// The stream's first message, checked to be a Schema.
Message first_message(std::string_view bytes, const std::string& context) {
  const Where where(stream_where(context, 0, 0));
  if (bytes.empty()) where.fail("empty message (no Arrow data)");
  Message m = read_message(bytes, 0, where);
  if (m.end_marker) where.fail("the stream ends before its schema");
  if (m.header_type == ids::kHeaderRecordBatch) {
    where.fail(
        "the stream starts with a RecordBatch message, not a Schema: is it a schema-less record "
        "batch message (which needs the schema from input_fields)?");
  }
  if (m.header_type != ids::kHeaderSchema) {
    where.fail(fmt::format("the stream starts with a {} message, not a Schema",
                           header_name(m.header_type)));
  }
  return m;
}

}  // namespace

ArrowBatch read_record_batch_message(std::string_view bytes, const ArrowSchema& schema,
                                     const std::string& context, const ReadOptions& options) {
  const Where where(context + ": Arrow record batch message");
  if (bytes.empty()) where.fail("empty message (no Arrow data)");
  const Message m = read_message(bytes, 0, where);
  if (m.end_marker) where.fail("the message is an end-of-stream marker, not a record batch");
  if (m.header_type == ids::kHeaderSchema) {
    where.fail(
        "the message is a Schema message, not a record batch: is it an Arrow IPC stream (read with "
        "the schema it carries)?");
  }
  if (m.header_type != ids::kHeaderRecordBatch) {
    where.fail(
        fmt::format("the message is a {} message, not a RecordBatch", header_name(m.header_type)));
  }
  return decode_batch(m, schema, options, context, where);
}

ArrowStream read_ipc_stream(std::string_view bytes, const std::string& context,
                            const ReadOptions& options) {
  ArrowStream out;
  const Message first = first_message(bytes, context);
  out.schema = decode_schema(first, Where(stream_where(context, 0, 0)));
  size_t pos = first.end;
  for (int index = 1; pos < bytes.size(); ++index) {
    const Where where(stream_where(context, index, pos));
    const Message m = read_message(bytes, pos, where);
    pos = m.end;
    if (m.end_marker) {
      out.has_end_marker = true;
      break;
    }
    switch (m.header_type) {
      case ids::kHeaderRecordBatch:
        out.batches.push_back(decode_batch(m, out.schema, options, context, where));
        break;
      case ids::kHeaderDictionaryBatch: break;  // dictionary-encoded columns are refused when read
      case ids::kHeaderSchema: where.fail("a second Schema message");
      default:
        where.fail(fmt::format("unexpected {} message in a stream", header_name(m.header_type)));
    }
  }
  return out;
}

ArrowSchema read_stream_schema(std::string_view bytes, const std::string& context) {
  return decode_schema(first_message(bytes, context), Where(stream_where(context, 0, 0)));
}

}  // namespace tzrec::arrow
