#include "arrow/body_compression.h"

#include <lz4frame.h>
#include <zstd.h>

#include <memory>

#include <fmt/format.h>

#include "arrow/flatbuffer.h"
#include "parquet/codecs.h"
#include "parquet/errors.h"

namespace tzrec::arrow {
namespace {

void lz4_frame_decompress(const uint8_t* data, size_t size, uint8_t* out, size_t out_size) {
  LZ4F_dctx* raw = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&raw, LZ4F_VERSION))) {
    throw FormatError("LZ4_FRAME: cannot create a decompression context");
  }
  std::unique_ptr<LZ4F_dctx, decltype(&LZ4F_freeDecompressionContext)> ctx(
      raw, &LZ4F_freeDecompressionContext);
  LZ4F_frameInfo_t info{};
  size_t consumed = size;
  size_t rc = LZ4F_getFrameInfo(ctx.get(), &info, data, &consumed);
  if (LZ4F_isError(rc)) throw FormatError(fmt::format("LZ4_FRAME: {}", LZ4F_getErrorName(rc)));
  if (info.contentSize != 0 && info.contentSize != out_size) {
    throw FormatError(
        fmt::format("LZ4_FRAME: the frame holds {} bytes, the buffer's length prefix says {}",
                    info.contentSize, out_size));
  }
  uint8_t dummy = 0;
  uint8_t* dst = out_size == 0 ? &dummy : out;
  size_t in_pos = consumed;
  size_t out_pos = 0;
  while (true) {
    size_t dst_size = out_size - out_pos;
    size_t src_size = size - in_pos;
    rc = LZ4F_decompress(ctx.get(), dst + out_pos, &dst_size, data + in_pos, &src_size, nullptr);
    if (LZ4F_isError(rc)) throw FormatError(fmt::format("LZ4_FRAME: {}", LZ4F_getErrorName(rc)));
    in_pos += src_size;
    out_pos += dst_size;
    if (rc == 0) break;  // end of the frame
    if (src_size == 0 && dst_size == 0) {
      if (out_pos == out_size) {
        throw FormatError(
            fmt::format("LZ4_FRAME: the frame decompresses to more than the {} bytes its length "
                        "prefix says",
                        out_size));
      }
      throw FormatError("LZ4_FRAME: the frame is truncated");
    }
  }
  if (out_pos != out_size) {
    throw FormatError(
        fmt::format("LZ4_FRAME: the frame decompressed to {} bytes, the buffer's length prefix "
                    "says {}",
                    out_pos, out_size));
  }
}

}  // namespace

const char* to_string(BodyCodec codec) {
  switch (codec) {
    case BodyCodec::kLz4Frame: return "LZ4_FRAME";
    case BodyCodec::kZstd: return "ZSTD";
    case BodyCodec::kNone: return "UNCOMPRESSED";
  }
  return "?";
}

uint64_t max_decompressed_size(BodyCodec codec, size_t size) {
  switch (codec) {
    case BodyCodec::kLz4Frame: return static_cast<uint64_t>(size) * 256 + 64;
    case BodyCodec::kZstd: return static_cast<uint64_t>(size) * 32768 + 64;
    case BodyCodec::kNone: return size;
  }
  return size;
}

void decompress_buffer(BodyCodec codec, const uint8_t* data, size_t size, uint8_t* out,
                       size_t out_size) {
  switch (codec) {
    case BodyCodec::kLz4Frame: lz4_frame_decompress(data, size, out, out_size); return;
    case BodyCodec::kZstd: {
      const unsigned long long content = ZSTD_getFrameContentSize(data, size);
      if (content == ZSTD_CONTENTSIZE_ERROR) throw FormatError("ZSTD: not a ZSTD frame");
      if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != out_size) {
        throw FormatError(
            fmt::format("ZSTD: the frame holds {} bytes, the buffer's length prefix says {}",
                        content, out_size));
      }
      try {
        parquet::decompress(parquet::Compression::kZstd, data, size, out, out_size);
      } catch (const parquet::DecodeError& e) {
        throw FormatError(e.what());
      }
      return;
    }
    case BodyCodec::kNone:
      if (size != out_size) {
        throw FormatError(fmt::format("{} bytes stored, {} expected", size, out_size));
      }
      if (size > 0) std::memcpy(out, data, size);
      return;
  }
}

void compress_buffer(BodyCodec codec, const uint8_t* data, size_t size, std::string* out) {
  switch (codec) {
    case BodyCodec::kLz4Frame: {
      LZ4F_preferences_t prefs{};
      prefs.frameInfo.contentSize = size;
      const size_t bound = LZ4F_compressFrameBound(size, &prefs);
      const size_t start = out->size();
      out->resize(start + bound);
      const size_t n = LZ4F_compressFrame(out->data() + start, bound, data, size, &prefs);
      if (LZ4F_isError(n)) {
        throw FormatError(fmt::format("LZ4_FRAME compression: {}", LZ4F_getErrorName(n)));
      }
      out->resize(start + n);
      return;
    }
    case BodyCodec::kZstd: parquet::compress(parquet::Compression::kZstd, data, size, out); return;
    case BodyCodec::kNone: out->append(reinterpret_cast<const char*>(data), size); return;
  }
}

}  // namespace tzrec::arrow
