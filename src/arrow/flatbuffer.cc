#include "arrow/flatbuffer.h"

#include <algorithm>

#include <fmt/format.h>

namespace tzrec::arrow {
namespace {

// Whether [pos, pos + n) lies within a buffer of `size` bytes (no overflow for any inputs).
bool fits(size_t pos, size_t n, size_t size) { return pos <= size && n <= size - pos; }

// Follows the uoffset stored at `pos`.
size_t follow_offset(const uint8_t* data, size_t size, size_t pos) {
  if (!fits(pos, 4, size)) {
    throw FormatError(
        fmt::format("flatbuffer offset at byte {} runs past the end ({} bytes)", pos, size));
  }
  const size_t target = pos + load_le<uint32_t>(data + pos);
  if (!fits(target, 4, size)) {
    throw FormatError(
        fmt::format("flatbuffer offset at byte {} points to byte {}, past the end ({} bytes)", pos,
                    target, size));
  }
  return target;
}

}  // namespace

FbTable FbTable::root(const uint8_t* data, size_t size) {
  if (size < 8) {
    throw FormatError(fmt::format("flatbuffer of {} bytes is too small to hold a table", size));
  }
  return FbTable(data, size, follow_offset(data, size, 0));
}

FbTable::FbTable(const uint8_t* data, size_t size, size_t pos)
    : data_(data), size_(size), pos_(pos) {
  if (!fits(pos, 4, size)) {
    throw FormatError(
        fmt::format("flatbuffer table at byte {} runs past the end ({} bytes)", pos, size));
  }
  const int64_t vtable = static_cast<int64_t>(pos) - load_le<int32_t>(data + pos);
  if (vtable < 0 || !fits(static_cast<size_t>(vtable), 4, size)) {
    throw FormatError(
        fmt::format("flatbuffer table at byte {} has its vtable at byte {}, outside the {} bytes",
                    pos, vtable, size));
  }
  vtable_ = static_cast<size_t>(vtable);
  vtable_size_ = load_le<uint16_t>(data + vtable_);
  inline_size_ = load_le<uint16_t>(data + vtable_ + 2);
  if (vtable_size_ < 4 || !fits(vtable_, vtable_size_, size)) {
    throw FormatError(
        fmt::format("flatbuffer vtable at byte {} has invalid size {}", vtable_, vtable_size_));
  }
  if (inline_size_ < 4 || !fits(pos, inline_size_, size)) {
    throw FormatError(
        fmt::format("flatbuffer table at byte {} has invalid size {} ({} bytes in all)", pos,
                    inline_size_, size));
  }
}

uint16_t FbTable::field_offset(int id) const {
  if (data_ == nullptr || id < 0) return 0;
  const size_t entry = 4 + 2 * static_cast<size_t>(id);
  if (entry + 2 > vtable_size_) return 0;
  return load_le<uint16_t>(data_ + vtable_ + entry);
}

size_t FbTable::field_position(int id, size_t width) const {
  const uint16_t off = field_offset(id);
  if (off == 0) return 0;
  if (off < 4 || static_cast<size_t>(off) + width > inline_size_) {
    throw FormatError(
        fmt::format("flatbuffer table at byte {}: field {} at offset {} lies outside the table "
                    "({} bytes)",
                    pos_, id, off, inline_size_));
  }
  return pos_ + off;
}

size_t FbTable::follow(size_t pos) const { return follow_offset(data_, size_, pos); }

std::optional<FbTable> FbTable::table(int id) const {
  const size_t p = field_position(id, 4);
  if (p == 0) return std::nullopt;
  return FbTable(data_, size_, follow(p));
}

std::optional<std::string_view> FbTable::string(int id) const {
  const size_t p = field_position(id, 4);
  if (p == 0) return std::nullopt;
  const size_t s = follow(p);
  const uint32_t len = load_le<uint32_t>(data_ + s);
  if (!fits(s + 4, len, size_)) {
    throw FormatError(fmt::format(
        "flatbuffer string at byte {} of {} bytes runs past the end ({} bytes)", s, len, size_));
  }
  return std::string_view(reinterpret_cast<const char*>(data_ + s + 4), len);
}

FbVector FbTable::vector(int id, size_t element_size) const {
  const size_t p = field_position(id, 4);
  if (p == 0) return FbVector();
  const size_t v = follow(p);
  const uint32_t count = load_le<uint32_t>(data_ + v);
  if ((size_ - v - 4) / element_size < count) {
    throw FormatError(
        fmt::format("flatbuffer vector at byte {} of {} elements of {} bytes runs past the end "
                    "({} bytes)",
                    v, count, element_size, size_));
  }
  return FbVector(data_, size_, v + 4, count, element_size);
}

const uint8_t* FbVector::element(size_t i, size_t element_size) const {
  if (i >= count_ || element_size > element_size_) {
    throw FormatError(
        fmt::format("flatbuffer vector element {} of {} read with the wrong size", i, count_));
  }
  return data_ + pos_ + i * element_size_;
}

FbTable FbVector::table(size_t i) const {
  if (i >= count_) throw FormatError(fmt::format("flatbuffer vector element {} of {}", i, count_));
  return FbTable(data_, size_, follow_offset(data_, size_, pos_ + 4 * i));
}

// ---- writing ----------------------------------------------------------------------------------

FbBuilder& FbBuilder::add_table(int id, FbBuilder table) {
  Field f{id, Kind::kTable};
  f.tables.push_back(std::move(table));
  fields_.push_back(std::move(f));
  return *this;
}

FbBuilder& FbBuilder::add_string(int id, std::string_view value) {
  Field f{id, Kind::kString};
  f.bytes.assign(value.data(), value.size());
  fields_.push_back(std::move(f));
  return *this;
}

FbBuilder& FbBuilder::add_tables(int id, std::vector<FbBuilder> tables) {
  Field f{id, Kind::kTables};
  f.tables = std::move(tables);
  fields_.push_back(std::move(f));
  return *this;
}

FbBuilder& FbBuilder::add_structs(int id, std::string bytes, size_t count, size_t align) {
  Field f{id, Kind::kVector};
  f.bytes = std::move(bytes);
  f.width = align;
  f.count = count;
  fields_.push_back(std::move(f));
  return *this;
}

// Writes front to back: a table's vtable, then the table, then the objects its offsets point to
// (so that every uoffset points forward, as FlatBuffers requires).
class FbSerializer {
 public:
  std::string out;

  size_t place_table(const FbBuilder& t) {
    int slots = 0;
    for (const auto& f : t.fields_) slots = std::max(slots, f.id + 1);
    // Inline layout: the soffset, then fields by decreasing width (each aligned to its width).
    std::vector<size_t> order(t.fields_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto width = [&](size_t i) {
      return t.fields_[i].kind == FbBuilder::Kind::kScalar ? t.fields_[i].width : 4;
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return width(a) > width(b); });
    std::vector<size_t> offset(t.fields_.size());
    size_t cur = 4;
    size_t table_align = 4;
    for (size_t i : order) {
      const size_t w = width(i);
      cur = (cur + w - 1) / w * w;
      offset[i] = cur;
      cur += w;
      table_align = std::max(table_align, w);
    }
    const size_t inline_size = (cur + 3) / 4 * 4;
    // vtable
    pad_to(2);
    const size_t vtable = out.size();
    const size_t vtable_size = 4 + 2 * static_cast<size_t>(slots);
    std::vector<uint16_t> vt(2 + static_cast<size_t>(slots), 0);
    vt[0] = static_cast<uint16_t>(vtable_size);
    vt[1] = static_cast<uint16_t>(inline_size);
    for (size_t i = 0; i < t.fields_.size(); ++i) {
      vt[2 + static_cast<size_t>(t.fields_[i].id)] = static_cast<uint16_t>(offset[i]);
    }
    out.append(reinterpret_cast<const char*>(vt.data()), vt.size() * 2);
    pad_to(table_align);
    const size_t table = out.size();
    out.append(inline_size, '\0');
    store<int32_t>(table, static_cast<int32_t>(table - vtable));
    for (size_t i = 0; i < t.fields_.size(); ++i) {
      if (t.fields_[i].kind == FbBuilder::Kind::kScalar) {
        std::memcpy(&out[table + offset[i]], t.fields_[i].bytes.data(), t.fields_[i].width);
      }
    }
    // Referenced objects, in field order.
    for (size_t i = 0; i < t.fields_.size(); ++i) {
      const auto& f = t.fields_[i];
      const size_t at = table + offset[i];
      switch (f.kind) {
        case FbBuilder::Kind::kScalar: break;
        case FbBuilder::Kind::kTable: patch(at, place_table(f.tables.front())); break;
        case FbBuilder::Kind::kString: {
          pad_to(4);
          const size_t s = out.size();
          append<uint32_t>(static_cast<uint32_t>(f.bytes.size()));
          out += f.bytes;
          out.push_back('\0');
          patch(at, s);
          break;
        }
        case FbBuilder::Kind::kVector: {
          pad_to(std::max<size_t>(f.width, 4), 4);
          const size_t v = out.size();
          append<uint32_t>(static_cast<uint32_t>(f.count));
          out += f.bytes;
          patch(at, v);
          break;
        }
        case FbBuilder::Kind::kTables: {
          pad_to(4);
          const size_t v = out.size();
          append<uint32_t>(static_cast<uint32_t>(f.tables.size()));
          out.append(4 * f.tables.size(), '\0');
          for (size_t k = 0; k < f.tables.size(); ++k) {
            patch(v + 4 + 4 * k, place_table(f.tables[k]));
          }
          patch(at, v);
          break;
        }
      }
    }
    return table;
  }

 private:
  // Pads so that out.size() + extra is a multiple of `align`.
  void pad_to(size_t align, size_t extra = 0) {
    while ((out.size() + extra) % align != 0) out.push_back('\0');
  }
  template <typename T>
  void append(T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  template <typename T>
  void store(size_t pos, T v) {
    std::memcpy(&out[pos], &v, sizeof(T));
  }
  void patch(size_t at, size_t target) { store<uint32_t>(at, static_cast<uint32_t>(target - at)); }
};

std::string FbBuilder::finish() const {
  FbSerializer s;
  s.out.assign(4, '\0');
  const size_t root = s.place_table(*this);
  const uint32_t off = static_cast<uint32_t>(root);
  std::memcpy(&s.out[0], &off, 4);
  return std::move(s.out);
}

}  // namespace tzrec::arrow
