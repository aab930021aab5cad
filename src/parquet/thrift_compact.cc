#include "parquet/thrift_compact.h"

#include <cstring>

#include <fmt/format.h>

#include "parquet/errors.h"

namespace tzrec::parquet::thrift {
namespace {

int64_t unzigzag(uint64_t v) { return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1)); }
uint64_t zigzag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }

}  // namespace

uint8_t CompactReader::read_u8() {
  if (pos_ >= end_) throw_decode_error("thrift: unexpected end of data");
  return *pos_++;
}

uint64_t CompactReader::read_varint() {
  uint64_t result = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    uint8_t b = read_u8();
    result |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return result;
  }
  throw_decode_error("thrift: varint longer than 10 bytes");
}

void CompactReader::begin_struct() {
  if (last_field_id_.size() >= kMaxDepth) {
    throw_decode_error(fmt::format("thrift: nesting deeper than {} levels", kMaxDepth));
  }
  last_field_id_.push_back(0);
}

bool CompactReader::next_field(int16_t* id, uint8_t* type) {
  uint8_t header = read_u8();
  uint8_t t = header & 0x0f;
  if (t == kStop) {
    last_field_id_.pop_back();
    return false;
  }
  uint8_t delta = header >> 4;
  int16_t field_id;
  if (delta != 0) {
    field_id = static_cast<int16_t>(last_field_id_.back() + delta);
  } else {
    int64_t v = unzigzag(read_varint());
    if (v < INT16_MIN || v > INT16_MAX) throw_decode_error("thrift: field id out of range");
    field_id = static_cast<int16_t>(v);
  }
  if (t > kStruct) throw_decode_error(fmt::format("thrift: invalid wire type {} of field {}", t, field_id));
  last_field_id_.back() = field_id;
  *id = field_id;
  *type = t;
  return true;
}

bool CompactReader::read_bool(uint8_t field_type) {
  if (field_type == kBoolTrue) return true;
  if (field_type == kBoolFalse) return false;
  throw_decode_error(fmt::format("thrift: wire type {} is not a bool", field_type));
}

bool CompactReader::read_bool_element() { return read_u8() == 1; }

int8_t CompactReader::read_byte() { return static_cast<int8_t>(read_u8()); }

int16_t CompactReader::read_i16() {
  int64_t v = unzigzag(read_varint());
  if (v < INT16_MIN || v > INT16_MAX) throw_decode_error("thrift: i16 out of range");
  return static_cast<int16_t>(v);
}

int32_t CompactReader::read_i32() {
  int64_t v = unzigzag(read_varint());
  if (v < INT32_MIN || v > INT32_MAX) throw_decode_error("thrift: i32 out of range");
  return static_cast<int32_t>(v);
}

int64_t CompactReader::read_i64() { return unzigzag(read_varint()); }

double CompactReader::read_double() {
  if (remaining() < 8) throw_decode_error("thrift: unexpected end of data in double");
  double d;
  std::memcpy(&d, pos_, 8);  // little-endian on the wire; we only build for little-endian hosts
  pos_ += 8;
  return d;
}

std::string CompactReader::read_binary() {
  uint64_t n = read_varint();
  if (n > remaining()) {
    throw_decode_error(fmt::format("thrift: binary of {} bytes but only {} bytes left", n, remaining()));
  }
  std::string s(reinterpret_cast<const char*>(pos_), n);
  pos_ += n;
  return s;
}

ListHeader CompactReader::read_list_header() {
  uint8_t header = read_u8();
  ListHeader h;
  h.elem_type = header & 0x0f;
  uint64_t n = header >> 4;
  if (n == 15) n = read_varint();
  // Every element takes at least one byte (even an empty struct: its STOP).
  if (n > remaining()) {
    throw_decode_error(fmt::format("thrift: list of {} elements but only {} bytes left", n, remaining()));
  }
  h.size = static_cast<int64_t>(n);
  return h;
}

void CompactReader::skip(uint8_t type) {
  switch (type) {
    case kBoolTrue:
    case kBoolFalse:
      return;  // as a struct field the value is in the type
    case kByte: read_u8(); return;
    case kI16:
    case kI32:
    case kI64: read_varint(); return;
    case kDouble:
      if (remaining() < 8) throw_decode_error("thrift: unexpected end of data in double");
      pos_ += 8;
      return;
    case kBinary: {
      uint64_t n = read_varint();
      if (n > remaining()) throw_decode_error("thrift: binary longer than the data left");
      pos_ += n;
      return;
    }
    case kList:
    case kSet: {
      ListHeader h = read_list_header();
      if (last_field_id_.size() >= kMaxDepth) throw_decode_error("thrift: nesting too deep");
      last_field_id_.push_back(0);  // counts the list as a level for the depth limit
      for (int64_t i = 0; i < h.size; ++i) {
        // Booleans inside lists are one byte each.
        if (h.elem_type == kBoolTrue || h.elem_type == kBoolFalse) {
          read_u8();
        } else {
          skip(h.elem_type);
        }
      }
      last_field_id_.pop_back();
      return;
    }
    case kMap: {
      uint64_t n = read_varint();
      if (n == 0) return;
      uint8_t kv = read_u8();
      if (n > remaining()) throw_decode_error("thrift: map larger than the data left");
      if (last_field_id_.size() >= kMaxDepth) throw_decode_error("thrift: nesting too deep");
      last_field_id_.push_back(0);
      for (uint64_t i = 0; i < n; ++i) {
        for (uint8_t t : {static_cast<uint8_t>(kv >> 4), static_cast<uint8_t>(kv & 0x0f)}) {
          if (t == kBoolTrue || t == kBoolFalse) {
            read_u8();
          } else {
            skip(t);
          }
        }
      }
      last_field_id_.pop_back();
      return;
    }
    case kStruct: {
      begin_struct();
      int16_t id;
      uint8_t t;
      while (next_field(&id, &t)) skip(t);
      return;
    }
    default: throw_decode_error(fmt::format("thrift: cannot skip wire type {}", type));
  }
}

void CompactReader::expect_type(int16_t field_id, uint8_t type, uint8_t expected, const char* struct_name) {
  bool ok = type == expected || (expected == kBoolTrue && type == kBoolFalse);
  if (!ok) {
    throw_decode_error(fmt::format("thrift: {} field {} has wire type {}, expected {}", struct_name, field_id,
                                   type, expected));
  }
}

// ---- writer -------------------------------------------------------------------------------------

void CompactWriter::varint(uint64_t v) {
  while (v >= 0x80) {
    out_->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out_->push_back(static_cast<char>(v));
}

void CompactWriter::field_header(int16_t id, uint8_t type) {
  int16_t last = last_field_id_.back();
  int delta = id - last;
  if (delta > 0 && delta <= 15) {
    out_->push_back(static_cast<char>((delta << 4) | type));
  } else {
    out_->push_back(static_cast<char>(type));
    varint(zigzag(id));
  }
  last_field_id_.back() = id;
}

void CompactWriter::struct_begin() { last_field_id_.push_back(0); }

void CompactWriter::struct_end() {
  out_->push_back(static_cast<char>(kStop));
  last_field_id_.pop_back();
}

void CompactWriter::field_struct_begin(int16_t id) {
  field_header(id, kStruct);
  struct_begin();
}

void CompactWriter::field_bool(int16_t id, bool v) { field_header(id, v ? kBoolTrue : kBoolFalse); }

void CompactWriter::field_byte(int16_t id, int8_t v) {
  field_header(id, kByte);
  out_->push_back(static_cast<char>(v));
}

void CompactWriter::field_i32(int16_t id, int32_t v) {
  field_header(id, kI32);
  varint(zigzag(v));
}

void CompactWriter::field_i64(int16_t id, int64_t v) {
  field_header(id, kI64);
  varint(zigzag(v));
}

void CompactWriter::field_binary(int16_t id, const std::string& v) {
  field_header(id, kBinary);
  write_binary(v);
}

void CompactWriter::field_list_begin(int16_t id, uint8_t elem_type, int64_t size) {
  field_header(id, kList);
  if (size < 15) {
    out_->push_back(static_cast<char>((size << 4) | elem_type));
  } else {
    out_->push_back(static_cast<char>(0xf0 | elem_type));
    varint(static_cast<uint64_t>(size));
  }
}

void CompactWriter::write_i32(int32_t v) { varint(zigzag(v)); }
void CompactWriter::write_i64(int64_t v) { varint(zigzag(v)); }

void CompactWriter::write_binary(const std::string& v) {
  varint(v.size());
  out_->append(v);
}

}  // namespace tzrec::parquet::thrift
