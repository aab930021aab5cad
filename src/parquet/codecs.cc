#include "parquet/codecs.h"

#include <brotli/decode.h>
#include <lz4.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <climits>
#include <cstring>

#include <fmt/format.h>

#include "parquet/errors.h"

namespace tzrec::parquet {
namespace {

[[noreturn]] void size_mismatch(Compression codec, size_t got, size_t want) {
  throw_decode_error(fmt::format("{} page decompressed to {} bytes, header says {}", to_string(codec), got, want));
}

void gunzip(const uint8_t* data, size_t size, uint8_t* out, size_t out_size) {
  // A GZIP page may hold several gzip members back to back (e.g. written by a streaming
  // compressor that flushed): inflate member after member until the input is used up.
  size_t in_pos = 0;
  size_t out_pos = 0;
  while (in_pos < size) {
    z_stream zs;
    std::memset(&zs, 0, sizeof(zs));
    // 15 + 32: zlib or gzip header, detected automatically.
    if (inflateInit2(&zs, 15 + 32) != Z_OK) throw_decode_error("GZIP: inflateInit failed");
    zs.next_in = const_cast<Bytef*>(data + in_pos);
    zs.avail_in = static_cast<uInt>(std::min<size_t>(size - in_pos, UINT_MAX));
    zs.next_out = out + out_pos;
    zs.avail_out = static_cast<uInt>(std::min<size_t>(out_size - out_pos, UINT_MAX));
    int rc = inflate(&zs, Z_FINISH);
    size_t used_in = zs.total_in;
    size_t produced = zs.total_out;
    inflateEnd(&zs);
    if (rc != Z_STREAM_END) {
      if (rc == Z_BUF_ERROR && zs.avail_out == 0) {
        throw_decode_error(fmt::format("GZIP page decompresses to more than the {} bytes its header says", out_size));
      }
      throw_decode_error(fmt::format("GZIP: corrupt data (zlib error {})", rc));
    }
    in_pos += used_in;
    out_pos += produced;
    if (used_in == 0) break;
    // Trailing zero padding after the last member is tolerated.
    bool rest_zero = true;
    for (size_t i = in_pos; i < size && rest_zero; ++i) rest_zero = data[i] == 0;
    if (rest_zero) break;
  }
  if (out_pos != out_size) size_mismatch(Compression::kGzip, out_pos, out_size);
}

uint32_t load_be32(const uint8_t* p) {
  return (static_cast<uint32_t>(p[0]) << 24) | (static_cast<uint32_t>(p[1]) << 16) | (static_cast<uint32_t>(p[2]) << 8) |
         static_cast<uint32_t>(p[3]);
}

// Hadoop's framing of LZ4 (what parquet-mr wrote for the deprecated LZ4 codec): a sequence of
// blocks, each [4-byte big-endian uncompressed size][4-byte big-endian compressed size][raw LZ4
// block]. Returns false (without throwing) when the bytes are not in that framing or do not
// decompress to exactly out_size bytes, so that the caller can try the raw block form.
bool lz4_hadoop(const uint8_t* data, size_t size, uint8_t* out, size_t out_size) {
  size_t in_pos = 0;
  size_t out_pos = 0;
  while (size - in_pos >= 8) {
    const uint32_t usize = load_be32(data + in_pos);
    const uint32_t csize = load_be32(data + in_pos + 4);
    in_pos += 8;
    if (csize > size - in_pos || usize > out_size - out_pos || csize > INT_MAX || usize > INT_MAX) return false;
    int got = LZ4_decompress_safe(reinterpret_cast<const char*>(data + in_pos), reinterpret_cast<char*>(out + out_pos),
                                  static_cast<int>(csize), static_cast<int>(usize));
    if (got < 0 || static_cast<uint32_t>(got) != usize) return false;
    in_pos += csize;
    out_pos += usize;
  }
  return in_pos == size && out_pos == out_size;
}

}  // namespace

bool codec_supported(Compression codec) {
  switch (codec) {
    case Compression::kUncompressed:
    case Compression::kSnappy:
    case Compression::kGzip:
    case Compression::kZstd:
    case Compression::kLz4:
    case Compression::kLz4Raw:
    case Compression::kBrotli: return true;
    default: return false;
  }
}

void decompress(Compression codec, const uint8_t* data, size_t size, uint8_t* out, size_t out_size) {
  switch (codec) {
    case Compression::kUncompressed:
      if (size != out_size) size_mismatch(codec, size, out_size);
      if (size > 0) std::memcpy(out, data, size);
      return;
    case Compression::kSnappy: {
      size_t len = 0;
      const char* in = reinterpret_cast<const char*>(data);
      if (!snappy::GetUncompressedLength(in, size, &len)) throw_decode_error("SNAPPY: corrupt length header");
      if (len != out_size) size_mismatch(codec, len, out_size);
      if (!snappy::RawUncompress(in, size, reinterpret_cast<char*>(out))) throw_decode_error("SNAPPY: corrupt data");
      return;
    }
    case Compression::kGzip: gunzip(data, size, out, out_size); return;
    case Compression::kZstd: {
      // ZSTD_decompress handles several concatenated frames and never writes past out_size.
      size_t got = ZSTD_decompress(out, out_size, data, size);
      if (ZSTD_isError(got)) throw_decode_error(fmt::format("ZSTD: {}", ZSTD_getErrorName(got)));
      if (got != out_size) size_mismatch(codec, got, out_size);
      return;
    }
    case Compression::kLz4Raw: {
      if (size > INT_MAX || out_size > INT_MAX) throw_decode_error("LZ4_RAW: page larger than 2 GiB");
      int got = LZ4_decompress_safe(reinterpret_cast<const char*>(data), reinterpret_cast<char*>(out),
                                    static_cast<int>(size), static_cast<int>(out_size));
      if (got < 0) throw_decode_error("LZ4_RAW: corrupt data");
      if (static_cast<size_t>(got) != out_size) size_mismatch(codec, static_cast<size_t>(got), out_size);
      return;
    }
    case Compression::kLz4: {
      // The deprecated LZ4 codec id: parquet-mr wrote Hadoop-framed blocks, other writers (older
      // parquet-cpp) a bare LZ4 block. Like other readers, try the Hadoop framing first.
      if (lz4_hadoop(data, size, out, out_size)) return;
      if (size > INT_MAX || out_size > INT_MAX) throw_decode_error("LZ4: page larger than 2 GiB");
      int got = LZ4_decompress_safe(reinterpret_cast<const char*>(data), reinterpret_cast<char*>(out),
                                    static_cast<int>(size), static_cast<int>(out_size));
      if (got < 0) throw_decode_error("LZ4: corrupt data (neither Hadoop-framed LZ4 blocks nor a raw LZ4 block)");
      if (static_cast<size_t>(got) != out_size) size_mismatch(codec, static_cast<size_t>(got), out_size);
      return;
    }
    case Compression::kBrotli: {
      size_t got = out_size;
      BrotliDecoderResult rc = BrotliDecoderDecompress(size, data, &got, out);
      if (rc != BROTLI_DECODER_RESULT_SUCCESS) throw_decode_error("BROTLI: corrupt data or larger than its header says");
      if (got != out_size) size_mismatch(codec, got, out_size);
      return;
    }
    default:
      throw_decode_error(fmt::format("unsupported codec {} (supported: UNCOMPRESSED, SNAPPY, GZIP, ZSTD, LZ4_RAW, "
                                     "LZ4, BROTLI); rewrite the file with one of these",
                                     to_string(codec)));
  }
}

void compress(Compression codec, const uint8_t* data, size_t size, std::string* out) {
  size_t start = out->size();
  switch (codec) {
    case Compression::kUncompressed: out->append(reinterpret_cast<const char*>(data), size); return;
    case Compression::kSnappy: {
      out->resize(start + snappy::MaxCompressedLength(size));
      size_t len = 0;
      snappy::RawCompress(reinterpret_cast<const char*>(data), size, out->data() + start, &len);
      out->resize(start + len);
      return;
    }
    case Compression::kZstd: {
      size_t bound = ZSTD_compressBound(size);
      out->resize(start + bound);
      size_t len = ZSTD_compress(out->data() + start, bound, data, size, 1);
      if (ZSTD_isError(len)) throw_decode_error(fmt::format("ZSTD compress: {}", ZSTD_getErrorName(len)));
      out->resize(start + len);
      return;
    }
    case Compression::kGzip: {
      z_stream zs;
      std::memset(&zs, 0, sizeof(zs));
      // 15 + 16: gzip wrapper, as the Parquet GZIP codec specifies.
      if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        throw_decode_error("GZIP: deflateInit failed");
      }
      size_t bound = deflateBound(&zs, static_cast<uLong>(size));
      out->resize(start + bound);
      zs.next_in = const_cast<Bytef*>(data);
      zs.avail_in = static_cast<uInt>(size);
      zs.next_out = reinterpret_cast<Bytef*>(out->data() + start);
      zs.avail_out = static_cast<uInt>(bound);
      int rc = deflate(&zs, Z_FINISH);
      size_t len = zs.total_out;
      deflateEnd(&zs);
      if (rc != Z_STREAM_END) throw_decode_error("GZIP: deflate failed");
      out->resize(start + len);
      return;
    }
    default:
      throw_decode_error(fmt::format("the writer does not support codec {} (use UNCOMPRESSED, SNAPPY, GZIP or ZSTD)",
                                     to_string(codec)));
  }
}

}  // namespace tzrec::parquet
