// A small Thrift compact-protocol codec: just what Parquet's footer and page headers need.
//
// Reader: pull-style (begin_struct / next_field / read_* / skip) over a byte range, with
// - every length checked against the bytes left (a list of n elements needs at least n bytes,
//   a binary of n bytes needs n bytes), so corrupt input cannot make us allocate unboundedly;
// - a nesting depth limit, so corrupt input cannot recurse forever;
// - skip() of fields we do not know, as Thrift's forward compatibility requires.
// Errors throw DecodeError.
//
// Writer: appends to a std::string; tracks the last field id per open struct for the
// delta-encoded field headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tzrec::parquet::thrift {

// Compact-protocol wire types.
enum WireType : uint8_t {
  kStop = 0,
  kBoolTrue = 1,
  kBoolFalse = 2,
  kByte = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
};

struct ListHeader {
  uint8_t elem_type = 0;
  int64_t size = 0;
};

class CompactReader {
 public:
  static constexpr int kMaxDepth = 64;

  CompactReader(const uint8_t* data, size_t size) : begin_(data), pos_(data), end_(data + size) {}

  // Structs: begin_struct(); while (next_field(&id, &type)) { ...read or skip(type)... }
  // next_field() consumes the STOP and closes the struct when it returns false.
  void begin_struct();
  bool next_field(int16_t* id, uint8_t* type);

  bool read_bool(uint8_t field_type);  // bool struct fields carry their value in the type
  bool read_bool_element();            // bool list elements are one byte
  int8_t read_byte();
  int16_t read_i16();
  int32_t read_i32();
  int64_t read_i64();
  double read_double();
  std::string read_binary();
  ListHeader read_list_header();

  // Skips one value of the given wire type (recursively, within the depth limit).
  void skip(uint8_t type);

  // Throws unless `type` is `expected` (for a field we know).
  static void expect_type(int16_t field_id, uint8_t type, uint8_t expected, const char* struct_name);

  size_t position() const { return static_cast<size_t>(pos_ - begin_); }
  size_t remaining() const { return static_cast<size_t>(end_ - pos_); }

 private:
  uint64_t read_varint();
  uint8_t read_u8();

  const uint8_t* begin_;
  const uint8_t* pos_;
  const uint8_t* end_;
  // Last field id per open struct (the compact protocol delta-encodes field ids).
  std::vector<int16_t> last_field_id_;
};

class CompactWriter {
 public:
  explicit CompactWriter(std::string* out) : out_(out) {}

  // Struct fields. A nested struct: field_struct_begin(id) ... struct_end().
  void struct_begin();  // the outermost struct (no field header)
  void struct_end();    // writes STOP
  void field_struct_begin(int16_t id);
  void field_bool(int16_t id, bool v);
  void field_byte(int16_t id, int8_t v);
  void field_i32(int16_t id, int32_t v);
  void field_i64(int16_t id, int64_t v);
  void field_binary(int16_t id, const std::string& v);
  // A list field: field_list_begin(id, elem_type, n) then n elements written with the plain
  // value writers below (struct elements: struct_begin() ... struct_end()).
  void field_list_begin(int16_t id, uint8_t elem_type, int64_t size);

  void write_i32(int32_t v);
  void write_i64(int64_t v);
  void write_binary(const std::string& v);

 private:
  void field_header(int16_t id, uint8_t type);
  void varint(uint64_t v);

  std::string* out_;
  std::vector<int16_t> last_field_id_;
};

}  // namespace tzrec::parquet::thrift
