#include "checkpoint/checkpoint.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "base/error.h"
#include "base/logging.h"
#include "base/text.h"
#include "base/version.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/sharded_checkpoint.h"

namespace tzrec::checkpointing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kCkptPrefix = "model.ckpt-";
constexpr const char* kModelFile = "model.safetensors";
constexpr const char* kOptimizerFile = "optimizer.safetensors";
constexpr const char* kManifestFile = "manifest.json";
constexpr const char* kDataloaderFile = "dataloader_state.json";

// "model.ckpt-<digits>" -> step; anything else -> nullopt.
std::optional<int64_t> parse_step(const std::string& name) {
  const size_t n = std::strlen(kCkptPrefix);
  if (name.size() <= n || name.compare(0, n, kCkptPrefix) != 0) return std::nullopt;
  const char* first = name.data() + n;
  const char* last = name.data() + name.size();
  if (!std::all_of(first, last, [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  int64_t step = 0;
  auto res = std::from_chars(first, last, step);
  if (res.ec != std::errc() || res.ptr != last) return std::nullopt;
  return step;
}

std::string dtype_str(torch::ScalarType t) {
  try {
    return safetensors_dtype_name(t);
  } catch (const CheckpointError&) {
    return c10::toString(t);  // not storable; only used in messages
  }
}

json describe_tensors(const std::map<std::string, torch::Tensor>& tensors) {
  json list = json::array();
  for (const auto& [name, t] : tensors) {
    list.push_back(
        {{"name", name}, {"shape", t.sizes().vec()}, {"dtype", dtype_str(t.scalar_type())}});
  }
  return list;
}

// Best effort: makes a rename inside `dir` durable. Failure only weakens crash safety.
void fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CheckpointError(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Checks that the manifest's tensor list matches what the tensor file holds.
void check_listing(const std::string& manifest_path, const json& listing, const char* field,
                   const std::map<std::string, torch::Tensor>& tensors, const std::string& file) {
  auto bad = [&](const std::string& why) {
    return CheckpointError(fmt::format(
        "{}: \"{}\" does not match {}: {}; the checkpoint is corrupt or was assembled from "
        "different saves — use another checkpoint",
        manifest_path, field, file, why));
  };
  if (!listing.is_array()) throw bad("the field is missing or not an array");
  std::set<std::string> seen;
  for (const auto& item : listing) {
    if (!item.is_object() || !item.contains("name") || !item["name"].is_string() ||
        !item.contains("shape") || !item.contains("dtype")) {
      throw bad("entry " + item.dump() + " lacks name/shape/dtype");
    }
    const std::string name = item["name"].get<std::string>();
    seen.insert(name);
    auto it = tensors.find(name);
    if (it == tensors.end()) throw bad("'" + name + "' is listed but not stored");
    const json shape = it->second.sizes().vec();
    if (item["shape"] != shape || item["dtype"] != dtype_str(it->second.scalar_type())) {
      throw bad(fmt::format("'{}' is listed as {} {} but stored as {} {}", name,
                            item["dtype"].dump(), item["shape"].dump(),
                            dtype_str(it->second.scalar_type()), shape.dump()));
    }
  }
  for (const auto& [name, t] : tensors) {
    if (!seen.count(name)) throw bad("'" + name + "' is stored but not listed");
  }
}

int64_t manifest_int(const std::string& path, const json& manifest, const char* key) {
  if (!manifest.contains(key) || !manifest[key].is_number_integer() ||
      manifest[key].get<int64_t>() < 0) {
    throw CheckpointError(
        fmt::format("{}: \"{}\" is missing or not a non-negative integer; the "
                    "manifest is corrupt — use another checkpoint",
                    path, key));
  }
  return manifest[key].get<int64_t>();
}

// ---- SHA-256 (FIPS 180-4) -------------------------------------------------------------------
constexpr std::array<uint32_t, 64> kSha256K = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void sha256_block(std::array<uint32_t, 8>& h, const unsigned char* p) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i) {
    w[i] = (uint32_t(p[4 * i]) << 24) | (uint32_t(p[4 * i + 1]) << 16) |
           (uint32_t(p[4 * i + 2]) << 8) | uint32_t(p[4 * i + 3]);
  }
  for (int i = 16; i < 64; ++i) {
    const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int i = 0; i < 64; ++i) {
    const uint32_t t1 =
        hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kSha256K[i] + w[i];
    const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    hh = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += hh;
}

}  // namespace

void write_text_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr)
    throw IoError(fmt::format("cannot open {} for writing: {}", path, std::strerror(errno)));
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() &&
                  std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  const int err = errno;
  if (std::fclose(f) != 0 || !ok) {
    throw IoError(fmt::format("cannot write {}: {}", path, std::strerror(ok ? errno : err)));
  }
}

std::string digest_text(const std::string& text) {
  std::array<uint32_t, 8> h = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const auto* data = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  for (; i + 64 <= n; i += 64) sha256_block(h, data + i);
  // Padding: 0x80, zeros, then the bit length as a big-endian uint64 (one or two final blocks).
  unsigned char tail[128] = {};
  const size_t rest = n - i;
  std::memcpy(tail, data + i, rest);
  tail[rest] = 0x80;
  const size_t tail_len = rest + 1 + 8 <= 64 ? 64 : 128;
  const uint64_t bits = static_cast<uint64_t>(n) * 8;
  for (int k = 0; k < 8; ++k) tail[tail_len - 1 - k] = static_cast<unsigned char>(bits >> (8 * k));
  for (size_t k = 0; k < tail_len; k += 64) sha256_block(h, tail + k);
  std::string hex;
  for (uint32_t v : h) hex += fmt::format("{:08x}", v);
  return hex;
}

std::string checkpoint_dir(const std::string& model_dir, int64_t step) {
  return (fs::path(model_dir) / (kCkptPrefix + std::to_string(step))).string();
}

std::vector<std::pair<std::string, int64_t>> list_checkpoints(const std::string& model_dir) {
  std::vector<std::pair<std::string, int64_t>> out;
  std::error_code ec;
  if (!fs::is_directory(model_dir, ec)) return out;
  for (const auto& entry : fs::directory_iterator(model_dir, ec)) {
    std::error_code ec2;
    if (!entry.is_directory(ec2)) continue;
    const std::string name = entry.path().filename().string();
    if (auto step = parse_step(name)) {
      out.emplace_back((fs::path(model_dir) / name).string(), *step);
    }
  }
  if (ec) throw IoError(fmt::format("cannot list {}: {}", model_dir, ec.message()));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second < b.second : a.first < b.first;
  });
  return out;
}

std::optional<std::pair<std::string, int64_t>> latest_checkpoint(const std::string& dir_or_ckpt) {
  std::string path = dir_or_ckpt;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const std::string name = fs::path(path).filename().string();
  if (name.compare(0, std::strlen(kCkptPrefix), kCkptPrefix) == 0) {
    // As TorchEasyRec: an explicit checkpoint path is used as-is; non-numeric suffix -> step 0.
    return std::make_pair(dir_or_ckpt, parse_step(name).value_or(0));
  }
  auto all = list_checkpoints(path);
  if (!all.empty()) return all.back();
  std::error_code ec;
  const fs::path manifest = fs::path(path) / kManifestFile;
  if (fs::exists(manifest, ec)) {
    int64_t step = 0;
    const json m =
        json::parse(read_text_file(manifest.string()), nullptr, /*allow_exceptions=*/false);
    if (m.is_object() && m.contains("step") && m["step"].is_number_integer())
      step = m["step"].get<int64_t>();
    return std::make_pair(dir_or_ckpt, step);
  }
  if (fs::exists(fs::path(path) / kModelFile, ec)) return std::make_pair(dir_or_ckpt, int64_t{0});
  return std::nullopt;
}

void write_checkpoint_files(const std::string& dir, const CheckpointData& data,
                            const nlohmann::ordered_json& extra_manifest) {
  TORCH_CHECK(data.step >= 0, "save_checkpoint: negative step ", data.step);
  for (const auto& [key, t] : data.optimizer) {
    TORCH_CHECK(key.rfind("sparse.", 0) == 0 || key.rfind("dense.", 0) == 0,
                "save_checkpoint: optimizer key '", key, "' must start with 'sparse.' or 'dense.'");
  }
  const std::map<std::string, std::string> meta = {{"format", "pt"}};
  save_safetensors((fs::path(dir) / kModelFile).string(), data.model, meta);
  save_safetensors((fs::path(dir) / kOptimizerFile).string(), data.optimizer, meta);
  nlohmann::ordered_json manifest;
  manifest["format_version"] = kCheckpointFormatVersion;
  manifest["step"] = data.step;
  manifest["config_digest"] = data.config_digest;
  manifest["tzrec_version"] = kVersion;
  manifest["parameters"] = describe_tensors(data.model);
  manifest["optimizer_state"] = describe_tensors(data.optimizer);
  for (const auto& [key, value] : extra_manifest.items()) manifest[key] = value;
  write_text_file((fs::path(dir) / kManifestFile).string(), manifest.dump(2) + "\n");
  write_text_file((fs::path(dir) / kDataloaderFile).string(), data.dataloader_state.dump(2) + "\n");
}

std::string checkpoint_staging_dir(const std::string& model_dir, int64_t step, const std::string& tag) {
  // Hidden sibling name: never listed as a checkpoint.
  return (fs::path(model_dir) / ("." + std::string(kCkptPrefix) + std::to_string(step) + ".tmp-" + tag)).string();
}

void publish_checkpoint_dir(const std::string& model_dir, const std::string& staging_dir, int64_t step) {
  std::error_code ec;
  const std::string final_dir = checkpoint_dir(model_dir, step);
  const std::string name = kCkptPrefix + std::to_string(step);
  if (!fs::exists(final_dir, ec)) {
    fs::rename(staging_dir, final_dir, ec);
    if (ec) throw IoError(fmt::format("cannot rename {} to {}: {}", staging_dir, final_dir, ec.message()));
  } else if (::renameat2(AT_FDCWD, staging_dir.c_str(), AT_FDCWD, final_dir.c_str(), RENAME_EXCHANGE) == 0) {
    // Atomic swap: readers see either the old or the new checkpoint; the old one is now staged.
    fs::remove_all(staging_dir, ec);
  } else {
    // Filesystem without RENAME_EXCHANGE: move the old one aside, then move the new one in.
    const std::string old_dir =
        (fs::path(model_dir) / ("." + name + ".old-" + std::to_string(::getpid()))).string();
    fs::remove_all(old_dir, ec);
    fs::rename(final_dir, old_dir, ec);
    if (ec) throw IoError(fmt::format("cannot move {} aside: {}", final_dir, ec.message()));
    fs::rename(staging_dir, final_dir, ec);
    if (ec) throw IoError(fmt::format("cannot rename {} to {}: {}", staging_dir, final_dir, ec.message()));
    fs::remove_all(old_dir, ec);
  }
  fsync_dir(model_dir);
}

void save_checkpoint(const std::string& model_dir, const CheckpointData& data) {
  std::error_code ec;
  fs::create_directories(model_dir, ec);
  if (ec) throw IoError(fmt::format("cannot create model_dir {}: {}", model_dir, ec.message()));
  const std::string tmp_dir = checkpoint_staging_dir(model_dir, data.step, std::to_string(::getpid()));
  fs::remove_all(tmp_dir, ec);
  if (!fs::create_directory(tmp_dir, ec) || ec) {
    throw IoError(fmt::format("cannot create {}: {}", tmp_dir, ec.message()));
  }
  try {
    write_checkpoint_files(tmp_dir, data, nlohmann::ordered_json::object());
    publish_checkpoint_dir(model_dir, tmp_dir, data.step);
  } catch (...) {
    std::error_code ignored;  // the original error is what the caller needs to see
    fs::remove_all(tmp_dir, ignored);
    throw;
  }
}

CheckpointData load_checkpoint(const std::string& ckpt_dir, bool assemble_shards) {
  std::error_code ec;
  if (!fs::is_directory(ckpt_dir, ec)) {
    throw CheckpointError(fmt::format(
        "checkpoint directory {} does not exist; pass a model_dir or a model_dir/model.ckpt-<step> "
        "directory written by tzrec",
        ckpt_dir));
  }
  const fs::path dir(ckpt_dir);
  const std::string manifest_path = (dir / kManifestFile).string();
  if (!fs::exists(manifest_path, ec)) {
    if (fs::exists(dir / "model", ec) || fs::exists(dir / "optimizer", ec)) {
      throw CheckpointError(fmt::format(
          "{}: this is a PyTorch TorchEasyRec checkpoint (torch.distributed.checkpoint 'model/' "
          "directory), which tzrec-cpp cannot read; train with tzrec-cpp or convert it to "
          "safetensors",
          ckpt_dir));
    }
    throw CheckpointError(fmt::format(
        "{}: missing {}; the checkpoint is incomplete or was not written by tzrec — delete it or "
        "point to another checkpoint",
        ckpt_dir, kManifestFile));
  }
  const json manifest =
      json::parse(read_text_file(manifest_path), nullptr, /*allow_exceptions=*/false);
  if (!manifest.is_object()) {
    throw CheckpointError(
        fmt::format("{}: not a valid JSON object; the checkpoint is corrupt — use "
                    "another checkpoint",
                    manifest_path));
  }
  const int64_t version = manifest_int(manifest_path, manifest, "format_version");
  if (version != kCheckpointFormatVersion) {
    throw CheckpointError(fmt::format(
        "{}: format_version {} is not supported by this tzrec build (reads {}); use the tzrec "
        "version that wrote it (tzrec_version {})",
        manifest_path, version, kCheckpointFormatVersion,
        manifest.contains("tzrec_version") ? manifest["tzrec_version"].dump() : "unknown"));
  }
  CheckpointData data;
  data.step = manifest_int(manifest_path, manifest, "step");
  if (!manifest.contains("config_digest") || !manifest["config_digest"].is_string()) {
    throw CheckpointError(
        fmt::format("{}: \"config_digest\" is missing or not a string; the "
                    "manifest is corrupt — use another checkpoint",
                    manifest_path));
  }
  data.config_digest = manifest["config_digest"].get<std::string>();
  const std::string name = dir.filename().string();
  if (auto dir_step = parse_step(name); dir_step && *dir_step != data.step) {
    log::warning("checkpoint directory {} holds step {} (per {}); using step {}", ckpt_dir,
                 data.step, kManifestFile, data.step);
  }

  for (const auto& [file, field, target] :
       {std::make_tuple(kModelFile, "parameters", &data.model),
        std::make_tuple(kOptimizerFile, "optimizer_state", &data.optimizer)}) {
    const std::string path = (dir / file).string();
    if (!fs::exists(path, ec)) {
      throw CheckpointError(
          fmt::format("{}: missing {}; the checkpoint is incomplete — use another "
                      "checkpoint",
                      ckpt_dir, file));
    }
    *target = load_safetensors(path).tensors;
    check_listing(manifest_path, manifest.contains(field) ? manifest[field] : json(), field,
                  *target, file);
  }

  data.dir = ckpt_dir;
  if (assemble_shards && manifest.contains("world_size")) {
    // A multi-rank checkpoint read by one process: whole tables and sparse state from the blocks.
    const CheckpointTensorIndex index(ckpt_dir);
    for (const std::string& tensor : index.names()) {
      const bool optimizer = tensor.rfind("sparse.", 0) == 0 || tensor.rfind("dense.", 0) == 0;
      auto& target = optimizer ? data.optimizer : data.model;
      if (target.count(tensor) == 0) target.emplace(tensor, index.read_whole(tensor));
    }
  }

  const std::string dl_path = (dir / kDataloaderFile).string();
  if (fs::exists(dl_path, ec)) {
    data.dataloader_state =
        json::parse(read_text_file(dl_path), nullptr, /*allow_exceptions=*/false);
    if (data.dataloader_state.is_discarded()) {
      throw CheckpointError(
          fmt::format("{}: not valid JSON; delete the file to restart data reading "
                      "from the beginning, or use another checkpoint",
                      dl_path));
    }
  }
  return data;
}

void restore_tensors(const std::map<std::string, torch::Tensor>& stored,
                     const std::vector<std::pair<std::string, torch::Tensor>>& params,
                     const std::string& what, bool allow_extra) {
  std::vector<std::string> problems;
  std::set<std::string> wanted;
  for (const auto& [name, param] : params) {
    wanted.insert(name);
    auto it = stored.find(name);
    if (it == stored.end()) {
      problems.push_back(fmt::format("'{}' (expected shape {} {}) is missing", name,
                                     format_shape(param.sizes().vec()), dtype_str(param.scalar_type())));
    } else if (it->second.sizes() != param.sizes() ||
               it->second.scalar_type() != param.scalar_type()) {
      problems.push_back(fmt::format("'{}': expected shape {} {}, found {} {}", name,
                                     format_shape(param.sizes().vec()), dtype_str(param.scalar_type()),
                                     format_shape(it->second.sizes().vec()),
                                     dtype_str(it->second.scalar_type())));
    }
  }
  if (!allow_extra) {
    for (const auto& [name, t] : stored) {
      if (!wanted.count(name)) {
        problems.push_back(fmt::format("'{}' (shape {}) is in the checkpoint but not in the {}",
                                       name, format_shape(t.sizes().vec()), what));
      }
    }
  }
  if (!problems.empty()) {
    constexpr size_t kMaxListed = 10;
    std::string list;
    for (size_t i = 0; i < std::min(problems.size(), kMaxListed); ++i)
      list += (i ? "; " : "") + problems[i];
    if (problems.size() > kMaxListed)
      list += fmt::format("; and {} more", problems.size() - kMaxListed);
    throw CheckpointError(fmt::format(
        "{} state in the checkpoint does not match: {}. The checkpoint was written for a different "
        "model/feature config; restore from a checkpoint of this config, or start a new model_dir",
        what, list));
  }
  torch::NoGradGuard no_grad;
  for (const auto& [name, param] : params) {
    torch::Tensor p = param;  // shares storage: copy_ writes into the caller's tensor
    p.copy_(stored.at(name));
  }
}

}  // namespace tzrec::checkpointing
