// Minimal FlatBuffers reading and writing, for the metadata of Arrow IPC messages (the Message,
// Schema and RecordBatch tables of format/Message.fbs and format/Schema.fbs) without the
// flatbuffers library.
//
// Layout reminders (FlatBuffers' binary format, little-endian):
//   buffer  = uoffset of the root table, ...
//   table   = soffset (int32: table position - vtable position), then the inline fields
//   vtable  = uint16 vtable bytes, uint16 table inline bytes, one uint16 per field id: the field's
//             offset from the table start, 0 when absent (the field then has its default)
//   uoffset = uint32 added to its own position (so referenced objects lie after the reference)
//   vector  = uint32 count, then the elements (scalars, structs inline, or uoffsets to tables)
//   string  = uint32 byte count, the bytes, a NUL
// Field ids are the declaration order in the .fbs file; a union field takes two ids, its type
// (uint8) and then its value (a table offset).
//
// Reading: every access is bounds-checked and throws FormatError for a malformed buffer; nothing
// is read outside [data, data + size) and no allocation depends on a count read from the buffer.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "base/error.h"

namespace tzrec::arrow {

// Malformed bytes, without location; the IPC reader rethrows it as a DataError naming the
// message.
class FormatError : public DataError {
 public:
  using DataError::DataError;
};

// The little-endian value of type T at p (any alignment).
template <typename T>
T load_le(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

class FbVector;

// A table of a flatbuffer (a view: the bytes must outlive it).
class FbTable {
 public:
  FbTable() = default;
  // The root table of the flatbuffer data[0, size).
  static FbTable root(const uint8_t* data, size_t size);

  // Whether field `id` is present (not left to its default).
  bool has(int id) const { return field_offset(id) != 0; }

  // Scalar field (integers, bool as uint8); `fallback` when absent.
  template <typename T>
  T scalar(int id, T fallback) const {
    static_assert(std::is_arithmetic_v<T>, "scalar<T>: T must be arithmetic");
    const size_t pos = field_position(id, sizeof(T));
    if (pos == 0) return fallback;
    T v;
    std::memcpy(&v, data_ + pos, sizeof(T));
    return v;
  }
  bool boolean(int id, bool fallback) const { return scalar<uint8_t>(id, fallback ? 1 : 0) != 0; }

  // Table, string and vector fields; nullopt / empty when absent.
  std::optional<FbTable> table(int id) const;
  std::optional<std::string_view> string(int id) const;
  // Vector of `element_size`-byte elements (4 for tables and strings, the struct size for
  // structs).
  FbVector vector(int id, size_t element_size) const;

 private:
  FbTable(const uint8_t* data, size_t size, size_t pos);
  // Offset of field `id` from the table start; 0 when absent.
  uint16_t field_offset(int id) const;
  // Buffer position of field `id` (checked to hold `width` bytes); 0 when absent.
  size_t field_position(int id, size_t width) const;
  // Follows the uoffset at `pos` (a field or a vector element); returns the target position.
  size_t follow(size_t pos) const;

  friend class FbVector;

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t pos_ = 0;     // table start
  size_t vtable_ = 0;  // vtable start
  uint16_t vtable_size_ = 0;
  uint16_t inline_size_ = 0;
};

// A vector of a flatbuffer; an absent vector is empty.
class FbVector {
 public:
  FbVector() = default;

  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }

  // Element i of a vector of tables.
  FbTable table(size_t i) const;
  // Element i of a vector of scalars.
  template <typename T>
  T scalar(size_t i) const {
    T v;
    std::memcpy(&v, element(i, sizeof(T)), sizeof(T));
    return v;
  }
  // The bytes of element i of a vector of structs.
  const uint8_t* element(size_t i, size_t element_size) const;

 private:
  FbVector(const uint8_t* data, size_t size, size_t pos, size_t count, size_t element_size)
      : data_(data), size_(size), pos_(pos), count_(count), element_size_(element_size) {}
  friend class FbTable;

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t pos_ = 0;  // first element
  size_t count_ = 0;
  size_t element_size_ = 0;
};

// A table to serialize. Fields are written in any order of ids; every added scalar is written
// (defaults included). Children are copied into their parent.
//
//   FbBuilder field;
//   field.add_string(0, "x").add_scalar<uint8_t>(1, 1).add_table(3, FbBuilder());
//   std::string bytes = field.finish();
class FbBuilder {
 public:
  template <typename T>
  FbBuilder& add_scalar(int id, T value) {
    static_assert(std::is_arithmetic_v<T>, "add_scalar<T>: T must be arithmetic");
    Field f{id, Kind::kScalar};
    f.bytes.assign(reinterpret_cast<const char*>(&value), sizeof(T));
    f.width = sizeof(T);
    fields_.push_back(std::move(f));
    return *this;
  }
  FbBuilder& add_bool(int id, bool value) { return add_scalar<uint8_t>(id, value ? 1 : 0); }
  FbBuilder& add_table(int id, FbBuilder table);
  FbBuilder& add_string(int id, std::string_view value);
  FbBuilder& add_tables(int id, std::vector<FbBuilder> tables);
  template <typename T>
  FbBuilder& add_scalars(int id, const std::vector<T>& values) {
    static_assert(std::is_arithmetic_v<T>, "add_scalars<T>: T must be arithmetic");
    Field f{id, Kind::kVector};
    f.bytes.assign(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
    f.width = sizeof(T);
    f.count = values.size();
    fields_.push_back(std::move(f));
    return *this;
  }
  // A vector of `count` structs of `element_size` bytes each (concatenated in `bytes`), aligned
  // to `align` bytes.
  FbBuilder& add_structs(int id, std::string bytes, size_t count, size_t align);

  // The flatbuffer with this table as its root.
  std::string finish() const;

 private:
  enum class Kind : int8_t { kScalar, kTable, kString, kTables, kVector };
  struct Field {
    Field(int field_id, Kind field_kind) : id(field_id), kind(field_kind) {}
    int id = 0;
    Kind kind = Kind::kScalar;
    std::string bytes;              // scalar value, string bytes or vector elements
    size_t width = 0;               // scalar width / vector element alignment
    size_t count = 0;               // vector elements
    std::vector<FbBuilder> tables;  // kTable (one) / kTables
  };
  friend class FbSerializer;

  std::vector<Field> fields_;
};

}  // namespace tzrec::arrow
