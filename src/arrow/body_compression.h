// Compression of the buffers of an Arrow record batch body (BodyCompression in Message.fbs): each
// buffer is compressed on its own, as one LZ4 frame (not a raw LZ4 block) or one ZSTD frame, and
// stored after its uncompressed length (int64, little-endian; -1 when the buffer is stored
// uncompressed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tzrec::arrow {

// Values of the CompressionType enum of Message.fbs, and kNone for an uncompressed body.
enum class BodyCodec : int8_t { kLz4Frame = 0, kZstd = 1, kNone = 2 };

const char* to_string(BodyCodec codec);

// The largest size `size` compressed bytes may expand to with `codec` (LZ4 at most 255 times,
// ZSTD at most 32768 times, plus a little): declared lengths above it are corrupt.
uint64_t max_decompressed_size(BodyCodec codec, size_t size);

// Decompresses data[0, size) into exactly out_size bytes at `out`. Throws FormatError when the
// data is corrupt or does not decompress to exactly out_size bytes (a ZSTD or LZ4 frame that
// states its content size is checked against out_size before anything is written).
void decompress_buffer(BodyCodec codec, const uint8_t* data, size_t size, uint8_t* out,
                       size_t out_size);

// Appends data[0, size) compressed as one frame to *out.
void compress_buffer(BodyCodec codec, const uint8_t* data, size_t size, std::string* out);

}  // namespace tzrec::arrow
