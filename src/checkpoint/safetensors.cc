#include "checkpoint/safetensors.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "base/error.h"
#include "base/text.h"

namespace tzrec::checkpointing {
namespace {

using nlohmann::json;

// Same limit as the reference implementation: refuse absurd headers before allocating them.
constexpr uint64_t kMaxHeaderBytes = 100u << 20;
constexpr const char* kMetadataKey = "__metadata__";

struct DtypeInfo {
  const char* name;
  torch::ScalarType type;
};
constexpr DtypeInfo kDtypes[] = {
    {"F64", torch::kFloat64},   {"F32", torch::kFloat32}, {"F16", torch::kFloat16},
    {"BF16", torch::kBFloat16}, {"I64", torch::kInt64},   {"I32", torch::kInt32},
    {"I16", torch::kInt16},     {"I8", torch::kInt8},     {"U8", torch::kUInt8},
    {"BOOL", torch::kBool},
};

bool host_is_little_endian() {
  const uint16_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

void require_little_endian() {
  if (!host_is_little_endian()) throw NotSupportedError("safetensors on a big-endian host");
}

// Closes the descriptor on scope exit (error paths included).
struct FdCloser {
  int fd = -1;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

int open_for_reading(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw CheckpointError(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  return fd;
}

// Reads exactly n bytes at `offset`; false on an error or end of file.
bool pread_exact(int fd, void* dst, uint64_t n, uint64_t offset) {
  auto* p = static_cast<char*>(dst);
  while (n > 0) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(n, uint64_t{1} << 30));
    const ssize_t got = ::pread(fd, p, want, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<uint64_t>(got);
    offset += static_cast<uint64_t>(got);
  }
  return true;
}

struct Entry {
  std::string name;
  torch::ScalarType type;
  std::vector<int64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

// Parses `text` as JSON, rejecting duplicate keys in any object (nlohmann keeps the last one
// silently; the format forbids duplicates and a duplicated tensor name is corruption).
json parse_header_json(const std::string& path, const std::string& text) {
  std::vector<std::set<std::string>> keys_stack;
  std::string duplicate;
  auto cb = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      keys_stack.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      if (!keys_stack.empty()) keys_stack.pop_back();
    } else if (event == json::parse_event_t::key && !keys_stack.empty()) {
      const std::string key = parsed.get<std::string>();
      if (!keys_stack.back().insert(key).second && duplicate.empty()) duplicate = key;
    }
    return true;
  };
  json header;
  try {
    header = json::parse(text, cb);
  } catch (const json::exception& e) {
    throw CheckpointError(fmt::format(
        "{}: header is not valid JSON ({}); the file is corrupt or not a safetensors file", path,
        e.what()));
  }
  if (!duplicate.empty()) {
    throw CheckpointError(
        fmt::format("{}: header has duplicate key '{}'; the file is corrupt", path, duplicate));
  }
  if (!header.is_object()) {
    throw CheckpointError(
        fmt::format("{}: header is not a JSON object; not a safetensors file", path));
  }
  return header;
}

uint64_t read_u64_field(const std::string& path, const std::string& name, const json& v,
                        const char* what) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
    throw CheckpointError(fmt::format("{}: tensor '{}': {} must be non-negative integers, got {}",
                                      path, name, what, v.dump()));
  }
  return v.get<uint64_t>();
}

Entry parse_entry(const std::string& path, const std::string& name, const json& info) {
  if (!info.is_object() || !info.contains("dtype") || !info.contains("shape") ||
      !info.contains("data_offsets")) {
    throw CheckpointError(fmt::format(
        "{}: tensor '{}': entry must be an object with dtype, shape and data_offsets, got {}", path,
        name, info.dump()));
  }
  Entry e;
  e.name = name;
  const json& dtype = info["dtype"];
  const DtypeInfo* found = nullptr;
  if (dtype.is_string()) {
    for (const auto& d : kDtypes) {
      if (dtype.get<std::string>() == d.name) found = &d;
    }
  }
  if (found == nullptr) {
    throw CheckpointError(fmt::format(
        "{}: tensor '{}': unknown or unsupported dtype {} (supported: F64 F32 F16 BF16 I64 I32 "
        "I16 I8 U8 BOOL)",
        path, name, dtype.dump()));
  }
  e.type = found->type;
  const json& shape = info["shape"];
  if (!shape.is_array()) {
    throw CheckpointError(
        fmt::format("{}: tensor '{}': shape must be an array, got {}", path, name, shape.dump()));
  }
  uint64_t nbytes = c10::elementSize(e.type);
  for (const auto& d : shape) {
    const uint64_t dim = read_u64_field(path, name, d, "shape entries");
    if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        __builtin_mul_overflow(nbytes, dim, &nbytes)) {
      throw CheckpointError(
          fmt::format("{}: tensor '{}': shape {} is too large", path, name, shape.dump()));
    }
    e.shape.push_back(static_cast<int64_t>(dim));
  }
  const json& offsets = info["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2) {
    throw CheckpointError(fmt::format("{}: tensor '{}': data_offsets must be [begin, end], got {}",
                                      path, name, offsets.dump()));
  }
  e.begin = read_u64_field(path, name, offsets[0], "data_offsets");
  e.end = read_u64_field(path, name, offsets[1], "data_offsets");
  if (e.end < e.begin || e.end - e.begin != nbytes) {
    throw CheckpointError(fmt::format(
        "{}: tensor '{}': data_offsets [{}, {}] do not match shape {} of {} ({} bytes); the file "
        "is corrupt",
        path, name, e.begin, e.end, format_shape(e.shape), found->name, nbytes));
  }
  return e;
}

// Writes file bytes at increasing offsets and leaves all-zero stretches as holes: a checkpoint
// of a large table trained on a few ids is mostly zero optimizer state (Adam moments, zero-
// initialised accumulators), and skipping it saves most of the write. Holes read back as zeros
// on every POSIX file system; where one cannot make holes the file simply takes the blocks.
class SparseFileWriter {
 public:
  SparseFileWriter(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  void append(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    while (n > 0) {
      // Chunks end on kChunk boundaries of the file so that skipped chunks are whole blocks.
      const size_t chunk = std::min<size_t>(n, kChunk - offset_ % kChunk);
      if (is_zero(p, chunk)) {
        flush();
        offset_ += chunk;
        pending_start_ = offset_;
      } else {
        if (pending_bytes_ == 0) pending_data_ = p;
        pending_bytes_ += chunk;
        offset_ += chunk;
      }
      p += chunk;
      n -= chunk;
    }
    flush();  // the caller's buffer may go away after this call
  }

  // Gives the file its full length (trailing holes included).
  void finish() {
    if (::ftruncate(fd_, static_cast<off_t>(offset_)) != 0) fail("cannot write");
  }

 private:
  static constexpr size_t kChunk = 64 << 10;

  static bool is_zero(const unsigned char* p, size_t n) {
    size_t i = 0;
    for (; i + sizeof(uint64_t) <= n; i += sizeof(uint64_t)) {
      uint64_t word;
      std::memcpy(&word, p + i, sizeof word);
      if (word != 0) return false;
    }
    for (; i < n; ++i) {
      if (p[i] != 0) return false;
    }
    return true;
  }

  // Pending bytes are contiguous in memory: append() flushes before it skips and on return.
  void flush() {
    const unsigned char* p = pending_data_;
    size_t n = pending_bytes_;
    off_t at = static_cast<off_t>(pending_start_);
    while (n > 0) {
      const ssize_t w = ::pwrite(fd_, p, n, at);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) fail("cannot write");
      p += w;
      n -= static_cast<size_t>(w);
      at += w;
    }
    pending_bytes_ = 0;
    pending_start_ = offset_;
  }

  [[noreturn]] void fail(const char* what) const {
    throw IoError(fmt::format("{} {}: {} (disk full?)", what, path_, std::strerror(errno)));
  }

  int fd_;
  std::string path_;
  uint64_t offset_ = 0;
  uint64_t pending_start_ = 0;
  const unsigned char* pending_data_ = nullptr;
  size_t pending_bytes_ = 0;
};

// Length prefix, padded header, then the tensor bytes in name order; fsynced.
void write_file(const std::string& tmp, const std::string& text,
                const std::map<std::string, torch::Tensor>& tensors) {
  FdCloser file{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  if (file.fd < 0) {
    throw IoError(fmt::format("cannot open {} for writing: {}", tmp, std::strerror(errno)));
  }
  SparseFileWriter writer(file.fd, tmp);
  unsigned char len_bytes[8];
  for (int i = 0; i < 8; ++i) len_bytes[i] = static_cast<unsigned char>(text.size() >> (8 * i));
  std::string head(reinterpret_cast<const char*>(len_bytes), 8);
  head += text;
  writer.append(head.data(), head.size());
  for (const auto& [name, t] : tensors) {
    // One CPU contiguous copy at a time keeps peak memory at one tensor.
    const torch::Tensor c = t.detach().to(torch::kCPU).contiguous();
    writer.append(c.data_ptr(), static_cast<size_t>(c.numel()) * c.element_size());
  }
  writer.finish();
  if (::fsync(file.fd) != 0) {
    throw IoError(fmt::format("cannot flush {}: {}", tmp, std::strerror(errno)));
  }
  const int rc = ::close(file.fd);
  file.fd = -1;
  if (rc != 0) throw IoError(fmt::format("cannot close {}: {}", tmp, std::strerror(errno)));
}

}  // namespace

std::string safetensors_dtype_name(torch::ScalarType dtype) {
  for (const auto& d : kDtypes) {
    if (d.type == dtype) return d.name;
  }
  throw CheckpointError(
      fmt::format("dtype {} cannot be stored in safetensors (supported: F64 F32 "
                  "F16 BF16 I64 I32 I16 I8 U8 BOOL)",
                  c10::toString(dtype)));
}

void save_safetensors(const std::string& path, const std::map<std::string, torch::Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  require_little_endian();
  // Header first (it needs only shapes and dtypes); data in name order, back to back.
  json header = json::object();
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name == kMetadataKey) {
      throw CheckpointError(
          fmt::format("{}: '{}' is reserved and cannot be a tensor name", path, name));
    }
    if (!t.defined()) {
      throw CheckpointError(fmt::format("{}: tensor '{}' is undefined", path, name));
    }
    if (t.layout() != torch::kStrided) {
      throw CheckpointError(
          fmt::format("{}: tensor '{}' has a sparse layout; store its dense form or its components",
                      path, name));
    }
    std::string dtype;
    try {
      dtype = safetensors_dtype_name(t.scalar_type());
    } catch (const CheckpointError& e) {
      throw CheckpointError(fmt::format("{}: tensor '{}': {}", path, name, e.what()));
    }
    const uint64_t nbytes = static_cast<uint64_t>(t.numel()) * t.element_size();
    header[name] = {
        {"dtype", dtype}, {"shape", t.sizes().vec()}, {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
  }
  if (!metadata.empty()) header[kMetadataKey] = metadata;
  std::string text;
  try {
    text = header.dump();
  } catch (const json::exception& e) {
    throw CheckpointError(
        fmt::format("{}: cannot encode header (tensor names and metadata must be valid UTF-8): {}",
                    path, e.what()));
  }
  text.append((8 - text.size() % 8) % 8, ' ');

  const std::string tmp = path + ".tmp";
  try {
    write_file(tmp, text, tensors);
  } catch (...) {
    std::remove(tmp.c_str());  // no half-written file is left behind; the error propagates
    throw;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw IoError(fmt::format("cannot rename {} to {}: {}", tmp, path, ec.message()));
}

namespace {

// The header of the open file `fd` (see read_safetensors_header).
SafetensorsHeader parse_header(int fd, const std::string& path) {
  require_little_endian();
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    throw CheckpointError(fmt::format("cannot stat {}: {}", path, std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    throw CheckpointError(fmt::format("{}: not a regular file", path));
  }
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  if (file_size < 8) {
    throw CheckpointError(fmt::format(
        "{}: file is {} bytes, shorter than the 8-byte header length; the file is truncated", path,
        file_size));
  }
  unsigned char len_bytes[8];
  if (!pread_exact(fd, len_bytes, 8, 0)) {
    throw CheckpointError(fmt::format("{}: cannot read the header length", path));
  }
  uint64_t header_len = 0;
  for (int i = 0; i < 8; ++i) header_len |= static_cast<uint64_t>(len_bytes[i]) << (8 * i);
  if (header_len > file_size - 8) {
    throw CheckpointError(
        fmt::format("{}: header length {} exceeds the file size {}; the file is truncated or not a "
                    "safetensors file",
                    path, header_len, file_size));
  }
  if (header_len > kMaxHeaderBytes) {
    throw CheckpointError(fmt::format("{}: header length {} exceeds the {} byte limit", path,
                                      header_len, kMaxHeaderBytes));
  }
  std::string text(header_len, '\0');
  if (header_len > 0 && !pread_exact(fd, text.data(), header_len, 8)) {
    throw CheckpointError(fmt::format("{}: cannot read the {} byte header", path, header_len));
  }
  if (text.empty() || text[0] != '{') {
    throw CheckpointError(fmt::format(
        "{}: header does not start with '{{'; the file is corrupt or not a safetensors file",
        path));
  }
  const json header = parse_header_json(path, text);

  SafetensorsHeader out;
  out.path = path;
  out.data_start = 8 + header_len;
  std::vector<Entry> entries;
  for (const auto& [name, info] : header.items()) {
    if (name == kMetadataKey) {
      if (info.is_null()) continue;
      if (!info.is_object()) {
        throw CheckpointError(fmt::format("{}: __metadata__ must be an object of strings, got {}",
                                          path, info.dump()));
      }
      for (const auto& [k, v] : info.items()) {
        if (!v.is_string()) {
          throw CheckpointError(fmt::format(
              "{}: __metadata__ value of '{}' must be a string, got {}", path, k, v.dump()));
        }
        out.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    entries.push_back(parse_entry(path, name, info));
  }

  // The tensors must tile the data buffer exactly: no byte outside it, no overlap, no gap.
  const uint64_t data_size = file_size - 8 - header_len;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t cursor = 0;
  for (const Entry& e : entries) {
    if (e.end > data_size) {
      throw CheckpointError(fmt::format(
          "{}: tensor '{}': data_offsets [{}, {}] lie beyond the {} byte data buffer; the file is "
          "truncated",
          path, e.name, e.begin, e.end, data_size));
    }
    if (e.begin < cursor) {
      throw CheckpointError(fmt::format(
          "{}: tensor '{}': data_offsets [{}, {}] overlap the previous tensor (which ends at {}); "
          "the file is corrupt",
          path, e.name, e.begin, e.end, cursor));
    }
    if (e.begin > cursor) {
      throw CheckpointError(fmt::format(
          "{}: tensor '{}': data_offsets [{}, {}] leave a gap after byte {}; the file is corrupt",
          path, e.name, e.begin, e.end, cursor));
    }
    cursor = e.end;
  }
  if (cursor != data_size) {
    throw CheckpointError(fmt::format(
        "{}: tensors cover {} bytes but the data buffer has {}; the file has trailing bytes or "
        "is corrupt",
        path, cursor, data_size));
  }
  for (Entry& e : entries) {
    out.tensors.emplace(e.name, SafetensorsEntry{e.type, std::move(e.shape), e.begin, e.end});
  }
  return out;
}

// A tensor seen as a matrix: rows are dim 0 (0-D: one row), a row is everything after dim 0.
struct MatrixShape {
  int64_t rows = 1;
  int64_t cols = 1;
};

MatrixShape matrix_shape(const SafetensorsEntry& e) {
  MatrixShape m;
  if (e.shape.empty()) return m;
  m.rows = e.shape[0];
  for (size_t i = 1; i < e.shape.size(); ++i) m.cols *= e.shape[i];
  return m;
}

const SafetensorsEntry& find_entry(const SafetensorsHeader& header, const std::string& name) {
  const auto it = header.tensors.find(name);
  if (it == header.tensors.end()) {
    throw CheckpointError(fmt::format("{}: no tensor '{}' in the file", header.path, name));
  }
  return it->second;
}

void check_range(const SafetensorsHeader& header, const std::string& name,
                 const SafetensorsEntry& e, const char* what, int64_t begin, int64_t count,
                 int64_t extent) {
  if (begin < 0 || count < 0 || begin > extent - count) {
    throw CheckpointError(
        fmt::format("{}: tensor '{}' of shape {}: {} [{}, {}) lie outside [0, {})", header.path,
                    name, format_shape(e.shape), what, begin, begin + count, extent));
  }
}

// Bytes above the skipped bytes per row at which a column range is read row by row (one pread
// each) instead of in chunks of whole rows; and the chunk buffer size.
constexpr uint64_t kRowByRowGapBytes = 16u << 10;
constexpr uint64_t kChunkBytes = 4u << 20;

// Reads the matrix block rows [row_begin, +rows) x columns [col_begin, +cols) of `e` into dst,
// whose rows are dst_stride bytes apart. The range must have been checked.
void read_block_bytes(int fd, const SafetensorsHeader& header, const std::string& name,
                      const SafetensorsEntry& e, int64_t row_begin, int64_t rows, int64_t col_begin,
                      int64_t cols, char* dst, uint64_t dst_stride) {
  if (rows == 0 || cols == 0) return;
  const MatrixShape m = matrix_shape(e);
  const uint64_t elem = c10::elementSize(e.dtype);
  const uint64_t row_bytes = static_cast<uint64_t>(m.cols) * elem;
  const uint64_t seg = static_cast<uint64_t>(cols) * elem;
  const uint64_t first = header.data_start + e.begin +
                         static_cast<uint64_t>(row_begin) * row_bytes +
                         static_cast<uint64_t>(col_begin) * elem;
  auto read = [&](void* to, uint64_t n, uint64_t offset) {
    if (!pread_exact(fd, to, n, offset)) {
      throw CheckpointError(fmt::format(
          "{}: tensor '{}': cannot read {} bytes at offset {} (file changed while reading?)",
          header.path, name, n, offset));
    }
  };
  const uint64_t n_rows = static_cast<uint64_t>(rows);
  if (seg == row_bytes && dst_stride == row_bytes) {
    read(dst, n_rows * row_bytes, first);  // one contiguous range
  } else if (row_bytes - seg >= kRowByRowGapBytes || row_bytes > kChunkBytes) {
    for (uint64_t r = 0; r < n_rows; ++r) read(dst + r * dst_stride, seg, first + r * row_bytes);
  } else {
    // Whole rows in chunks, from the first needed byte to the last one.
    const uint64_t chunk_rows = std::max<uint64_t>(1, kChunkBytes / row_bytes);
    std::vector<char> buf(static_cast<size_t>(std::min(chunk_rows, n_rows) * row_bytes));
    for (uint64_t r0 = 0; r0 < n_rows; r0 += chunk_rows) {
      const uint64_t n = std::min(chunk_rows, n_rows - r0);
      read(buf.data(), (n - 1) * row_bytes + seg, first + r0 * row_bytes);
      for (uint64_t r = 0; r < n; ++r) {
        std::memcpy(dst + (r0 + r) * dst_stride, buf.data() + r * row_bytes, seg);
      }
    }
  }
  if (e.dtype == torch::kBool) {
    for (uint64_t r = 0; r < n_rows; ++r) {
      const auto* bytes = reinterpret_cast<const uint8_t*>(dst + r * dst_stride);
      for (uint64_t c = 0; c < seg; ++c) {
        if (bytes[c] > 1) {
          const uint64_t element = (static_cast<uint64_t>(row_begin) + r) * m.cols +
                                   static_cast<uint64_t>(col_begin) + c;
          throw CheckpointError(
              fmt::format("{}: tensor '{}': BOOL element {} has byte value {} (must be 0 or 1)",
                          header.path, name, element, bytes[c]));
        }
      }
    }
  }
}

torch::Tensor read_whole(int fd, const SafetensorsHeader& header, const std::string& name,
                         const SafetensorsEntry& e) {
  torch::Tensor t = torch::empty(e.shape, torch::TensorOptions().dtype(e.dtype));
  const MatrixShape m = matrix_shape(e);
  read_block_bytes(fd, header, name, e, 0, m.rows, 0, m.cols, static_cast<char*>(t.data_ptr()),
                   static_cast<uint64_t>(m.cols) * t.element_size());
  return t;
}

}  // namespace

SafetensorsHeader read_safetensors_header(const std::string& path) {
  require_little_endian();
  FdCloser file{open_for_reading(path)};
  return parse_header(file.fd, path);
}

SafetensorsFile load_safetensors(const std::string& path) {
  require_little_endian();
  FdCloser file{open_for_reading(path)};
  const SafetensorsHeader header = parse_header(file.fd, path);
  SafetensorsFile out;
  out.metadata = header.metadata;
  for (const auto& [name, e] : header.tensors) {
    out.tensors.emplace(name, read_whole(file.fd, header, name, e));
  }
  return out;
}

torch::Tensor read_safetensors_tensor(const SafetensorsHeader& header, const std::string& name) {
  const SafetensorsEntry& e = find_entry(header, name);
  FdCloser file{open_for_reading(header.path)};
  return read_whole(file.fd, header, name, e);
}

torch::Tensor read_safetensors_rows(const SafetensorsHeader& header, const std::string& name,
                                    int64_t row_begin, int64_t rows) {
  const SafetensorsEntry& e = find_entry(header, name);
  if (e.shape.empty()) {
    throw CheckpointError(
        fmt::format("{}: tensor '{}' is 0-D and has no rows to select", header.path, name));
  }
  check_range(header, name, e, "rows", row_begin, rows, e.shape[0]);
  std::vector<int64_t> sizes = e.shape;
  sizes[0] = rows;
  torch::Tensor t = torch::empty(sizes, torch::TensorOptions().dtype(e.dtype));
  const MatrixShape m = matrix_shape(e);
  FdCloser file{open_for_reading(header.path)};
  read_block_bytes(file.fd, header, name, e, row_begin, rows, 0, m.cols,
                   static_cast<char*>(t.data_ptr()),
                   static_cast<uint64_t>(m.cols) * t.element_size());
  return t;
}

torch::Tensor read_safetensors_block(const SafetensorsHeader& header, const std::string& name,
                                     int64_t row_begin, int64_t rows, int64_t col_begin,
                                     int64_t cols) {
  const SafetensorsEntry& e = find_entry(header, name);
  if (e.shape.size() != 2) {
    throw CheckpointError(
        fmt::format("{}: tensor '{}' has shape {}; a row x column block needs a 2-D tensor",
                    header.path, name, format_shape(e.shape)));
  }
  check_range(header, name, e, "rows", row_begin, rows, e.shape[0]);
  check_range(header, name, e, "columns", col_begin, cols, e.shape[1]);
  torch::Tensor t = torch::empty({rows, cols}, torch::TensorOptions().dtype(e.dtype));
  FdCloser file{open_for_reading(header.path)};
  read_block_bytes(file.fd, header, name, e, row_begin, rows, col_begin, cols,
                   static_cast<char*>(t.data_ptr()),
                   static_cast<uint64_t>(cols) * t.element_size());
  return t;
}

void read_safetensors_block_into(const SafetensorsHeader& header, const std::string& name,
                                 int64_t row_begin, int64_t col_begin, const torch::Tensor& out) {
  const SafetensorsEntry& e = find_entry(header, name);
  TORCH_CHECK(
      out.defined() && out.device().is_cpu() && out.dim() == 2 && out.layout() == torch::kStrided,
      "read_safetensors_block_into: out must be a 2-D strided CPU tensor");
  TORCH_CHECK(out.scalar_type() == e.dtype, "read_safetensors_block_into: out is ",
              out.scalar_type(), " but tensor '", name, "' is ", e.dtype);
  TORCH_CHECK(out.stride(1) == 1 || out.size(1) <= 1,
              "read_safetensors_block_into: the rows of out must be contiguous");
  TORCH_CHECK(out.size(0) <= 1 || out.stride(0) >= out.size(1),
              "read_safetensors_block_into: the rows of out must not overlap");
  const MatrixShape m = matrix_shape(e);
  check_range(header, name, e, "rows", row_begin, out.size(0), m.rows);
  check_range(header, name, e, "columns", col_begin, out.size(1), m.cols);
  FdCloser file{open_for_reading(header.path)};
  read_block_bytes(file.fd, header, name, e, row_begin, out.size(0), col_begin, out.size(1),
                   static_cast<char*>(out.data_ptr()),
                   static_cast<uint64_t>(out.stride(0)) * out.element_size());
}

}  // namespace tzrec::checkpointing
