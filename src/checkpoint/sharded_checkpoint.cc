#include "checkpoint/sharded_checkpoint.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <utility>

#include "base/error.h"
#include "base/text.h"
#include "embedding/embedding_group_set.h"

namespace tzrec::checkpointing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kFormatKey = "__format__";
constexpr const char* kFormatName = "tzrec.tensor_blocks";
constexpr int kFormatVersion = 1;
// Whole-tensor files of train/checkpoint.h, read as one block per tensor.
constexpr const char* kWholeFiles[] = {"model.safetensors", "optimizer.safetensors"};

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Matrix form of a shape (safetensors.h): rows are dim 0 (0-D: one row), a row is the rest.
std::pair<int64_t, int64_t> matrix_of(const std::vector<int64_t>& shape) {
  if (shape.empty()) return {1, 1};
  int64_t cols = 1;
  for (size_t i = 1; i < shape.size(); ++i) cols *= shape[i];
  return {shape[0], cols};
}

// The block as a CPU contiguous tensor, for byte comparisons.
torch::Tensor cpu_bytes(const torch::Tensor& t) { return t.detach().to(torch::kCPU).contiguous(); }

bool same_bytes(const torch::Tensor& a, const torch::Tensor& b) {
  const torch::Tensor ca = cpu_bytes(a);
  const torch::Tensor cb = cpu_bytes(b);
  return ca.sizes() == cb.sizes() && ca.scalar_type() == cb.scalar_type() &&
         std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.numel() * ca.element_size()) == 0;
}

std::string scalar_str(const torch::Tensor& t) {
  const c10::Scalar s = t.item();
  if (s.isBoolean()) return s.toBool() ? "true" : "false";
  if (s.isIntegral(false)) return std::to_string(s.toLong());
  return fmt::format("{}", s.toDouble());
}

std::string block_where(const TensorBlock& b) {
  if (b.global_shape.empty()) return fmt::format("tensor '{}'", b.name);
  if (b.global_shape.size() == 1)
    return fmt::format("tensor '{}' block at row {}", b.name, b.row_offset);
  return fmt::format("tensor '{}' block at ({}, {})", b.name, b.row_offset, b.col_offset);
}

void check_block(const std::string& path, const TensorBlock& b) {
  if (b.name.empty() || b.name.rfind("__", 0) == 0) {
    throw CheckpointError(
        fmt::format("{}: block name '{}' is empty or starts with the reserved '__'", path, b.name));
  }
  const std::string where = block_where(b);
  if (b.global_shape.size() > 2) {
    throw CheckpointError(fmt::format("{}: {}: global shape {} has more than 2 dims", path, where,
                                      format_shape(b.global_shape)));
  }
  for (int64_t d : b.global_shape) {
    if (d < 0) {
      throw CheckpointError(fmt::format("{}: {}: global shape {} has a negative dim", path, where,
                                        format_shape(b.global_shape)));
    }
  }
  if (!b.value.defined() || b.value.layout() != torch::kStrided) {
    throw CheckpointError(fmt::format("{}: {}: value is undefined or not strided", path, where));
  }
  try {
    safetensors_dtype_name(b.value.scalar_type());
  } catch (const CheckpointError& e) {
    throw CheckpointError(fmt::format("{}: {}: {}", path, where, e.what()));
  }
  const size_t dims = b.global_shape.size();
  const std::vector<int64_t> offsets = {b.row_offset, b.col_offset};
  bool ok = static_cast<size_t>(b.value.dim()) == dims;
  for (size_t i = 0; i < 2; ++i) {
    if (i >= dims) {
      ok = ok && offsets[i] == 0;
    } else if (ok) {
      ok = offsets[i] >= 0 && offsets[i] <= b.global_shape[i] &&
           b.value.size(static_cast<int64_t>(i)) <= b.global_shape[i] - offsets[i];
    }
  }
  if (!ok) {
    throw CheckpointError(fmt::format(
        "{}: {}: value of shape {} at offsets ({}, {}) does not lie inside the global shape {} "
        "(it needs the same number of dims; unused offsets must be 0)",
        path, where, format_shape(b.value.sizes().vec()), b.row_offset, b.col_offset,
        format_shape(b.global_shape)));
  }
}

// The per-key metadata value: {"name", "global_shape", "offsets"}.
std::string block_metadata(const TensorBlock& b) {
  std::vector<int64_t> offsets = {b.row_offset, b.col_offset};
  offsets.resize(b.global_shape.size());
  json j = json::object();
  j["name"] = b.name;
  j["global_shape"] = b.global_shape;
  j["offsets"] = offsets;
  return j.dump();
}

// Non-negative integers of a JSON array, or nullopt.
std::optional<std::vector<int64_t>> int_array(const json& j) {
  if (!j.is_array()) return std::nullopt;
  std::vector<int64_t> out;
  for (const auto& v : j) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0) return std::nullopt;
    out.push_back(v.get<int64_t>());
  }
  return out;
}

json parse_metadata_json(const std::string& path, const std::string& key, const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    throw CheckpointError(
        fmt::format("{}: __metadata__ entry '{}' is not a JSON object ({}); the file is corrupt",
                    path, key, text));
  }
  return j;
}

}  // namespace

std::string rank_block_file(const std::string& dir, const std::string& prefix, int rank,
                            int world_size) {
  return (fs::path(dir) / fmt::format("{}-{:06d}-of-{:06d}.safetensors", prefix, rank, world_size))
      .string();
}

void save_rank_blocks(const std::string& dir, const std::string& prefix, int rank, int world_size,
                      const std::vector<TensorBlock>& blocks) {
  const std::string path = rank_block_file(dir, prefix, rank, world_size);
  if (prefix.empty() || prefix.find('/') != std::string::npos) {
    throw CheckpointError(
        fmt::format("{}: file prefix '{}' must be a plain non-empty name", path, prefix));
  }
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    throw CheckpointError(
        fmt::format("{}: rank {} is outside [0, world_size {})", path, rank, world_size));
  }
  // Group by name, keeping the caller's order within a name.
  std::map<std::string, std::vector<const TensorBlock*>> by_name;
  for (const TensorBlock& b : blocks) {
    check_block(path, b);
    auto& group = by_name[b.name];
    if (!group.empty()) {
      const TensorBlock& first = *group.front();
      if (first.global_shape != b.global_shape) {
        throw CheckpointError(
            fmt::format("{}: tensor '{}': blocks disagree on the global shape ({} "
                        "and {})",
                        path, b.name, format_shape(first.global_shape), format_shape(b.global_shape)));
      }
      if (first.value.scalar_type() != b.value.scalar_type()) {
        throw CheckpointError(fmt::format(
            "{}: tensor '{}': blocks disagree on the dtype ({} and {})", path, b.name,
            c10::toString(first.value.scalar_type()), c10::toString(b.value.scalar_type())));
      }
    }
    group.push_back(&b);
  }

  std::map<std::string, torch::Tensor> tensors;
  std::map<std::string, std::string> metadata;
  for (const auto& [name, group] : by_name) {
    // Blocks without elements carry nothing, unless the tensor itself has none (keep one so the
    // name and shape survive); identical blocks at the same offsets are stored once.
    std::vector<const TensorBlock*> kept;
    const bool empty_tensor = numel_of(group.front()->global_shape) == 0;
    for (const TensorBlock* b : group) {
      if (b->value.numel() == 0 && !(empty_tensor && kept.empty())) continue;
      bool duplicate = false;
      for (const TensorBlock* k : kept) {
        if (k->row_offset != b->row_offset || k->col_offset != b->col_offset) continue;
        if (!same_bytes(k->value, b->value)) {
          throw CheckpointError(fmt::format("{}: {} is given twice with different shapes or values",
                                            path, block_where(*b)));
        }
        duplicate = true;
      }
      if (!duplicate) kept.push_back(b);
    }
    for (const TensorBlock* b : kept) {
      const std::string key =
          kept.size() == 1 ? name : fmt::format("{}@{},{}", name, b->row_offset, b->col_offset);
      if (tensors.count(key) != 0) {
        throw CheckpointError(
            fmt::format("{}: key '{}' of {} collides with another tensor's key; rename the tensor",
                        path, key, block_where(*b)));
      }
      tensors.emplace(key, b->value);
      metadata.emplace(key, block_metadata(*b));
    }
  }
  metadata[kFormatKey] = json{
      {"format", kFormatName},
      {"version", kFormatVersion},
      {"rank", rank},
      {"world_size",
       world_size}}.dump();
  save_safetensors(path, tensors, metadata);
}

// ---- CheckpointTensorIndex ---------------------------------------------------------------------

CheckpointTensorIndex::CheckpointTensorIndex(const std::string& dir) : dir_(dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    throw CheckpointError(
        fmt::format("cannot list checkpoint directory {}: {}", dir, ec.message()));
  }
  std::set<std::string> whole;
  // prefix -> rank -> path; world size -> one file that has it (for messages).
  std::map<std::string, std::map<int, std::string>> ranked;
  std::map<int, std::string> world_sizes;
  static const std::regex kBlockFile(R"((.+)-([0-9]{6,9})-of-([0-9]{6,9})\.safetensors)");
  for (const fs::directory_entry& entry : it) {
    const std::string file = entry.path().filename().string();
    if (std::find(std::begin(kWholeFiles), std::end(kWholeFiles), file) != std::end(kWholeFiles)) {
      whole.insert(entry.path().string());
      continue;
    }
    std::smatch m;
    if (!std::regex_match(file, m, kBlockFile)) continue;
    const int rank = std::stoi(m[2].str());
    const int world = std::stoi(m[3].str());
    if (world < 1 || rank >= world) {
      throw CheckpointError(fmt::format(
          "{}: the name says rank {} of {} ranks, which is impossible; remove the file or use "
          "another checkpoint",
          entry.path().string(), rank, world));
    }
    ranked[m[1].str()][rank] = entry.path().string();
    world_sizes.emplace(world, entry.path().string());
  }
  if (world_sizes.size() > 1) {
    const auto a = world_sizes.begin();
    const auto b = std::next(a);
    throw CheckpointError(fmt::format(
        "{}: block files of different world sizes ({} of {} ranks, {} of {}); a checkpoint holds "
        "the files of one job — remove the stray files or use another checkpoint",
        dir, a->second, a->first, b->second, b->first));
  }
  if (!world_sizes.empty()) world_size_ = world_sizes.begin()->first;

  for (const std::string& path : whole) {
    files_.push_back(read_safetensors_header(path));
    add_whole_file(files_.size() - 1);
  }
  for (const auto& [prefix, ranks] : ranked) {
    for (int r = 0; r < world_size_; ++r) {
      const auto found = ranks.find(r);
      if (found == ranks.end()) {
        throw CheckpointError(fmt::format(
            "{}: missing {}: rank {} of {} wrote no {} blocks; the checkpoint is incomplete — use "
            "another checkpoint",
            dir, rank_block_file(dir, prefix, r, world_size_), r, world_size_, prefix));
      }
      files_.push_back(read_safetensors_header(found->second));
      add_block_file(files_.size() - 1, r, world_size_);
    }
  }
}

std::string CheckpointTensorIndex::file_prefix(const std::string& name) const {
  const std::string file = fs::path(files_[find(name).pieces.front().file].path).filename().string();
  return file.substr(0, file.find_first_of(".-"));
}

void CheckpointTensorIndex::add_whole_file(size_t file) {
  for (const auto& [key, e] : files_[file].tensors) {
    Piece p;
    p.file = file;
    p.key = key;
    std::tie(p.rows, p.cols) = matrix_of(e.shape);
    add_piece(key, e.shape, e.dtype, std::move(p));
  }
}

void CheckpointTensorIndex::add_block_file(size_t file, int rank, int world_size) {
  const SafetensorsHeader& h = files_[file];
  const auto format = h.metadata.find(kFormatKey);
  if (format == h.metadata.end()) {
    throw CheckpointError(fmt::format(
        "{}: __metadata__ has no '{}' entry; not a block file (written by another tool?)", h.path,
        kFormatKey));
  }
  const json f = parse_metadata_json(h.path, kFormatKey, format->second);
  if (f.value("format", json()) != kFormatName || f.value("version", json()) != kFormatVersion) {
    throw CheckpointError(fmt::format(
        "{}: __format__ is {}, expected format \"{}\" version {}; written by another version?",
        h.path, format->second, kFormatName, kFormatVersion));
  }
  if (f.value("rank", json()) != rank || f.value("world_size", json()) != world_size) {
    throw CheckpointError(fmt::format(
        "{}: __format__ says {} but the file name says rank {} of {}; the file was renamed — "
        "use another checkpoint",
        h.path, format->second, rank, world_size));
  }
  for (const auto& [key, value] : h.metadata) {
    if (key != kFormatKey && h.tensors.count(key) == 0) {
      throw CheckpointError(fmt::format(
          "{}: __metadata__ describes '{}' but the file has no such tensor; the file is corrupt",
          h.path, key));
    }
  }
  for (const auto& [key, e] : h.tensors) {
    const auto meta = h.metadata.find(key);
    if (meta == h.metadata.end()) {
      throw CheckpointError(fmt::format(
          "{}: tensor '{}' has no __metadata__ entry (name, global_shape, offsets); the file is "
          "corrupt",
          h.path, key));
    }
    const json j = parse_metadata_json(h.path, key, meta->second);
    const json name = j.value("name", json());
    const auto global = int_array(j.value("global_shape", json()));
    const auto offsets = int_array(j.value("offsets", json()));
    if (!name.is_string() || name.get<std::string>().empty() || !global || !offsets ||
        global->size() > 2 || offsets->size() != global->size()) {
      throw CheckpointError(fmt::format(
          "{}: tensor '{}': __metadata__ entry {} must be {{\"name\": non-empty string, "
          "\"global_shape\": up to 2 non-negative ints, \"offsets\": one non-negative int per "
          "dim}}; the file is corrupt",
          h.path, key, meta->second));
    }
    bool inside = e.shape.size() == global->size();
    for (size_t i = 0; inside && i < global->size(); ++i) {
      inside = (*offsets)[i] <= (*global)[i] && e.shape[i] <= (*global)[i] - (*offsets)[i];
    }
    if (!inside) {
      throw CheckpointError(fmt::format(
          "{}: tensor '{}': stored shape {} at offsets {} does not lie inside the global shape {}; "
          "the file is corrupt",
          h.path, key, format_shape(e.shape), format_shape(*offsets), format_shape(*global)));
    }
    Piece p;
    p.file = file;
    p.key = key;
    std::tie(p.rows, p.cols) = matrix_of(e.shape);
    if (!offsets->empty()) p.row_offset = (*offsets)[0];
    if (offsets->size() > 1) p.col_offset = (*offsets)[1];
    add_piece(name.get<std::string>(), *global, e.dtype, std::move(p));
  }
}

void CheckpointTensorIndex::add_piece(const std::string& name,
                                      const std::vector<int64_t>& global_shape,
                                      torch::ScalarType dtype, Piece piece) {
  auto [it, inserted] = tensors_.try_emplace(name);
  Logical& t = it->second;
  if (inserted) {
    t.shape = global_shape;
    t.dtype = dtype;
  } else {
    const std::string& first = files_[t.pieces.front().file].path;
    const std::string& here = files_[piece.file].path;
    if (t.shape != global_shape) {
      throw CheckpointError(fmt::format(
          "{}: tensor '{}' has global shape {} in {} but {} in {}; the files come from different "
          "checkpoints — use another checkpoint",
          dir_, name, format_shape(t.shape), first, format_shape(global_shape), here));
    }
    if (t.dtype != dtype) {
      throw CheckpointError(fmt::format(
          "{}: tensor '{}' is {} in {} but {} in {}; the files come from different checkpoints — "
          "use another checkpoint",
          dir_, name, safetensors_dtype_name(t.dtype), first, safetensors_dtype_name(dtype), here));
    }
  }
  t.pieces.push_back(std::move(piece));
}

std::vector<std::string> CheckpointTensorIndex::names() const {
  std::vector<std::string> out;
  out.reserve(tensors_.size());
  for (const auto& [name, t] : tensors_) out.push_back(name);
  return out;
}

bool CheckpointTensorIndex::contains(const std::string& name) const {
  return tensors_.count(name) != 0;
}

const CheckpointTensorIndex::Logical& CheckpointTensorIndex::find(const std::string& name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) {
    throw CheckpointError(fmt::format("checkpoint {} has no tensor '{}'", dir_, name));
  }
  return it->second;
}

std::vector<int64_t> CheckpointTensorIndex::shape(const std::string& name) const {
  return find(name).shape;
}

torch::ScalarType CheckpointTensorIndex::dtype(const std::string& name) const {
  return find(name).dtype;
}

torch::Tensor CheckpointTensorIndex::read_scalar(const std::string& name, const Logical& t) const {
  torch::Tensor first;
  const std::string* first_path = nullptr;
  for (const Piece& p : t.pieces) {
    const SafetensorsHeader& h = files_[p.file];
    torch::Tensor v = read_safetensors_tensor(h, p.key);
    if (!first.defined()) {
      first = v;
      first_path = &h.path;
    } else if (!same_bytes(first, v)) {
      throw CheckpointError(fmt::format(
          "{}: scalar '{}' is {} in {} but {} in {}; the ranks' copies must be equal — the "
          "checkpoint is corrupt, use another checkpoint",
          dir_, name, scalar_str(first), *first_path, scalar_str(v), h.path));
    }
  }
  return first;
}

torch::Tensor CheckpointTensorIndex::read_block(const std::string& name, int64_t row_offset,
                                                int64_t rows, int64_t col_offset,
                                                int64_t cols) const {
  const Logical& t = find(name);
  if (t.shape.empty()) return read_scalar(name, t);
  const auto [total_rows, total_cols] = matrix_of(t.shape);
  const bool two_d = t.shape.size() == 2;
  if (!two_d) {
    col_offset = 0;
    cols = total_cols;
  }
  auto check = [&](const char* what, int64_t begin, int64_t count, int64_t extent) {
    if (begin < 0 || count < 0 || begin > extent - count) {
      throw CheckpointError(fmt::format(
          "checkpoint {}: tensor '{}' of shape {}: requested {} [{}, {}) lie outside [0, {})", dir_,
          name, format_shape(t.shape), what, begin, begin + count, extent));
    }
  };
  check("rows", row_offset, rows, total_rows);
  check("columns", col_offset, cols, total_cols);

  // The parts of the block each piece supplies; a piece adding nothing new is skipped.
  struct Part {
    const Piece* piece;
    int64_t r0, r1, c0, c1;  // global coordinates, half-open
  };
  std::vector<Part> parts;
  const int64_t row_end = row_offset + rows;
  const int64_t col_end = col_offset + cols;
  for (const Piece& p : t.pieces) {
    const Part part{&p, std::max(row_offset, p.row_offset),
                    std::min(row_end, p.row_offset + p.rows), std::max(col_offset, p.col_offset),
                    std::min(col_end, p.col_offset + p.cols)};
    if (part.r0 >= part.r1 || part.c0 >= part.c1) continue;
    const bool known = std::any_of(parts.begin(), parts.end(), [&](const Part& q) {
      return q.r0 <= part.r0 && part.r1 <= q.r1 && q.c0 <= part.c0 && part.c1 <= q.c1;
    });
    if (!known) parts.push_back(part);
  }

  // Coverage: in each strip of rows between part boundaries, the parts spanning it must cover
  // the block's columns. Checked before any read.
  if (rows > 0 && cols > 0) {
    std::vector<int64_t> bounds = {row_offset, row_end};
    for (const Part& q : parts) {
      bounds.push_back(q.r0);
      bounds.push_back(q.r1);
    }
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    // First gap of the strip [a, b): [g0, g1), or g0 == g1 when covered.
    auto gap_of = [&](int64_t a, int64_t b) {
      std::vector<std::pair<int64_t, int64_t>> spans;
      for (const Part& q : parts) {
        if (q.r0 <= a && b <= q.r1) spans.emplace_back(q.c0, q.c1);
      }
      std::sort(spans.begin(), spans.end());
      int64_t reach = col_offset;
      for (const auto& [c0, c1] : spans) {
        if (c0 > reach) return std::make_pair(reach, c0);
        reach = std::max(reach, c1);
      }
      return std::make_pair(reach, col_end);
    };
    for (size_t i = 0; i + 1 < bounds.size(); ++i) {
      const auto gap = gap_of(bounds[i], bounds[i + 1]);
      if (gap.first == gap.second) continue;
      size_t j = i + 1;  // extend over the following strips with the same gap
      while (j + 1 < bounds.size() && gap_of(bounds[j], bounds[j + 1]) == gap) ++j;
      const std::string range = two_d ? fmt::format("rows [{}, {}) x columns [{}, {})", bounds[i],
                                                    bounds[j], gap.first, gap.second)
                                      : fmt::format("rows [{}, {})", bounds[i], bounds[j]);
      throw CheckpointError(fmt::format(
          "checkpoint {}: tensor '{}' of shape {}: {} are stored in no file (block files of {} "
          "ranks); the checkpoint is incomplete or corrupt — use another checkpoint",
          dir_, name, format_shape(t.shape), range, world_size_));
    }
  }

  torch::Tensor out = torch::empty({rows, cols}, torch::TensorOptions().dtype(t.dtype));
  for (const Part& q : parts) {
    const Piece& p = *q.piece;
    read_safetensors_block_into(files_[p.file], p.key, q.r0 - p.row_offset, q.c0 - p.col_offset,
                                out.slice(0, q.r0 - row_offset, q.r1 - row_offset)
                                    .slice(1, q.c0 - col_offset, q.c1 - col_offset));
  }
  if (two_d) return out;
  std::vector<int64_t> sizes = t.shape;
  sizes[0] = rows;
  return out.view(sizes);
}

torch::Tensor CheckpointTensorIndex::read_whole(const std::string& name) const {
  const std::vector<int64_t>& s = find(name).shape;
  if (s.empty()) return read_block(name, 0, 0, 0, 0);
  return read_block(name, 0, s[0], 0, s.size() == 2 ? s[1] : 0);
}

std::string table_weight_name(const embedding::EmbeddingGroupSet& group, const std::string& table) {
  return group.parameter_name_of(table);
}

std::string shard_state_name(const std::string& table, const std::string& slot, const torch::Tensor& value,
                             const dist::Shard& shard, int64_t embedding_dim) {
  std::string name = "sparse." + table + "." + slot;
  if (value.dim() == 1 && shard.cols != embedding_dim) {
    name += fmt::format("@cols{}-{}", shard.col_offset, shard.col_offset + shard.cols);
  }
  return name;
}

torch::Tensor read_shard_block(const CheckpointTensorIndex& index, const std::string& name, const dist::Shard& shard) {
  const auto shape = index.shape(name);
  if (shape.empty()) return index.read_whole(name);
  if (shape.size() == 1) return index.read_block(name, shard.row_offset, shard.rows, 0, 0);
  return index.read_block(name, shard.row_offset, shard.rows, shard.col_offset, shard.cols);
}

}  // namespace tzrec::checkpointing
