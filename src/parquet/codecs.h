// Page compression codecs: UNCOMPRESSED, SNAPPY, GZIP (zlib; concatenated members), ZSTD,
// LZ4_RAW, the deprecated LZ4 (Hadoop framing, else a raw block) and BROTLI for reading; UNCOMPRESSED, SNAPPY, GZIP and ZSTD for writing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "parquet/types.h"

namespace tzrec::parquet {

bool codec_supported(Compression codec);

// Decompresses `size` bytes into exactly `out_size` bytes at `out`. Throws DecodeError when the
// data is corrupt or does not decompress to exactly out_size bytes, and when the codec is not
// supported ("unsupported codec X").
void decompress(Compression codec, const uint8_t* data, size_t size, uint8_t* out, size_t out_size);

// Appends the compressed form of data[0, size) to *out. Throws DecodeError for codecs the writer
// does not support.
void compress(Compression codec, const uint8_t* data, size_t size, std::string* out);

}  // namespace tzrec::parquet
