#include "train/safetensors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
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

namespace tzrec::train {
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

// Closes the FILE on scope exit (error paths included).
struct FileCloser {
  std::FILE* f = nullptr;
  ~FileCloser() {
    if (f != nullptr) std::fclose(f);
  }
};

std::string shape_str(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
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
        path, name, e.begin, e.end, shape_str(e.shape), found->name, nbytes));
  }
  return e;
}

// Length prefix, padded header, then the tensor bytes in name order; fsynced.
void write_file(const std::string& tmp, const std::string& text,
                const std::map<std::string, torch::Tensor>& tensors) {
  FileCloser file{std::fopen(tmp.c_str(), "wb")};
  if (file.f == nullptr) {
    throw IoError(fmt::format("cannot open {} for writing: {}", tmp, std::strerror(errno)));
  }
  auto write = [&](const void* data, size_t n) {
    if (n > 0 && std::fwrite(data, 1, n, file.f) != n) {
      throw IoError(fmt::format("cannot write {}: {} (disk full?)", tmp, std::strerror(errno)));
    }
  };
  unsigned char len_bytes[8];
  for (int i = 0; i < 8; ++i) len_bytes[i] = static_cast<unsigned char>(text.size() >> (8 * i));
  write(len_bytes, 8);
  write(text.data(), text.size());
  for (const auto& [name, t] : tensors) {
    // One CPU contiguous copy at a time keeps peak memory at one tensor.
    const torch::Tensor c = t.detach().to(torch::kCPU).contiguous();
    write(c.data_ptr(), static_cast<size_t>(c.numel()) * c.element_size());
  }
  if (std::fflush(file.f) != 0 || ::fsync(::fileno(file.f)) != 0) {
    throw IoError(fmt::format("cannot flush {}: {}", tmp, std::strerror(errno)));
  }
  const int rc = std::fclose(file.f);
  file.f = nullptr;
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

SafetensorsFile load_safetensors(const std::string& path) {
  require_little_endian();
  FileCloser file{std::fopen(path.c_str(), "rb")};
  if (file.f == nullptr) {
    throw CheckpointError(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  }
  std::error_code ec;
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  if (ec) throw CheckpointError(fmt::format("cannot stat {}: {}", path, ec.message()));
  if (file_size < 8) {
    throw CheckpointError(fmt::format(
        "{}: file is {} bytes, shorter than the 8-byte header length; the file is truncated", path,
        file_size));
  }
  unsigned char len_bytes[8];
  if (std::fread(len_bytes, 1, 8, file.f) != 8) {
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
  if (header_len > 0 && std::fread(text.data(), 1, header_len, file.f) != header_len) {
    throw CheckpointError(fmt::format("{}: cannot read the {} byte header", path, header_len));
  }
  if (text.empty() || text[0] != '{') {
    throw CheckpointError(fmt::format(
        "{}: header does not start with '{{'; the file is corrupt or not a safetensors file",
        path));
  }
  const json header = parse_header_json(path, text);

  SafetensorsFile out;
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

  for (const Entry& e : entries) {
    torch::Tensor t = torch::empty(e.shape, torch::TensorOptions().dtype(e.type));
    const size_t nbytes = static_cast<size_t>(e.end - e.begin);
    if (nbytes > 0) {
      if (::fseeko(file.f, static_cast<off_t>(8 + header_len + e.begin), SEEK_SET) != 0 ||
          std::fread(t.data_ptr(), 1, nbytes, file.f) != nbytes) {
        throw CheckpointError(fmt::format(
            "{}: tensor '{}': cannot read {} bytes at offset {} (file changed while reading?)",
            path, e.name, nbytes, 8 + header_len + e.begin));
      }
    }
    if (e.type == torch::kBool) {
      const auto* bytes = static_cast<const uint8_t*>(t.data_ptr());
      for (size_t i = 0; i < nbytes; ++i) {
        if (bytes[i] > 1) {
          throw CheckpointError(
              fmt::format("{}: tensor '{}': BOOL element {} has byte value {} (must be 0 or 1)",
                          path, e.name, i, bytes[i]));
        }
      }
    }
    out.tensors.emplace(e.name, std::move(t));
  }
  return out;
}

}  // namespace tzrec::train
