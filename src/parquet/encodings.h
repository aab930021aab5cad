// Value encodings of Parquet data pages (Encodings.md): PLAIN, DELTA_BINARY_PACKED,
// DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY and BYTE_STREAM_SPLIT decoders, plus the PLAIN
// encoders the writer needs. Dictionary indices and RLE booleans are in rle.h.
//
// Decoders write exactly n values (the page's non-null values) or throw DecodeError; they never
// read outside [data, data + size). Byte-array decoders return views into the page (or into
// `arena` for DELTA_BYTE_ARRAY, whose values are rebuilt from prefixes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tzrec::parquet {

// PLAIN fixed width (INT32/INT64/INT96/FLOAT/DOUBLE and FIXED_LEN_BYTE_ARRAY): n * width bytes.
// Returns the bytes consumed.
size_t decode_plain_fixed(const uint8_t* data, size_t size, int64_t n, int width, uint8_t* out);
// PLAIN BOOLEAN: n bits LSB first; out gets 0/1 bytes. Returns the bytes consumed.
size_t decode_plain_boolean(const uint8_t* data, size_t size, int64_t n, uint8_t* out);
// PLAIN BYTE_ARRAY: 4-byte little-endian length + bytes, n times. Returns the bytes consumed.
size_t decode_plain_byte_array(const uint8_t* data, size_t size, int64_t n, std::string_view* out);
// PLAIN FIXED_LEN_BYTE_ARRAY as views.
size_t decode_plain_flba(const uint8_t* data, size_t size, int64_t n, int width, std::string_view* out);

// DELTA_BINARY_PACKED for INT32 (T = int32_t) or INT64 (T = int64_t). Decodes the first n values
// (n must not exceed the header's total count). Returns the bytes consumed up to the end of the
// last miniblock used, which is the end of the encoding when n is the total count.
template <typename T>
size_t decode_delta_binary_packed(const uint8_t* data, size_t size, int64_t n, T* out);
// The total value count announced by a DELTA_BINARY_PACKED header.
int64_t delta_binary_packed_count(const uint8_t* data, size_t size);

// DELTA_LENGTH_BYTE_ARRAY (the encoded count must be n). Returns the bytes consumed.
size_t decode_delta_length_byte_array(const uint8_t* data, size_t size, int64_t n, std::string_view* out);
// DELTA_BYTE_ARRAY (incremental / front coding; the encoded count must be n). Values are rebuilt into *arena, whose total is
// capped at max_bytes (a corrupt page could otherwise claim quadratic output); the views point
// into *arena and stay valid until it is next modified.
void decode_delta_byte_array(const uint8_t* data, size_t size, int64_t n, size_t max_bytes,
                             std::string* arena, std::string_view* out);

// BYTE_STREAM_SPLIT: width streams of n bytes; out gets n values of `width` bytes.
void decode_byte_stream_split(const uint8_t* data, size_t size, int64_t n, int width, uint8_t* out);

// ---- encoders (writer) ----
void encode_plain_byte_array(const std::string_view* values, int64_t n, std::string* out);
void encode_plain_boolean(const uint8_t* values, int64_t n, std::string* out);

}  // namespace tzrec::parquet
