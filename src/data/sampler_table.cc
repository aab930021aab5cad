#include "data/sampler_table.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"
#include "base/text.h"
#include "data/alias_table.h"
#include "data/input_files.h"
#include "parquet/file_reader.h"

namespace tzrec::data {

uint64_t graphlearn_hash64(std::string_view text) {
  // MurmurHash64A (Austin Appleby), as graphlearn's common/base/hash.cc Hash64 with its seed.
  constexpr uint64_t kMul = 0xc6a4a7935bd1e995ULL;
  constexpr int kShift = 47;
  const uint64_t n = text.size();
  const unsigned char* p = reinterpret_cast<const unsigned char*>(text.data());
  uint64_t h = 0xDECAFCAFFEULL ^ (n * kMul);
  const unsigned char* const blocks_end = p + (n / 8) * 8;
  for (; p != blocks_end; p += 8) {
    uint64_t k = 0;
    for (int b = 7; b >= 0; --b) k = (k << 8) | p[b];  // little-endian load
    k *= kMul;
    k ^= k >> kShift;
    k *= kMul;
    h ^= k;
    h *= kMul;
  }
  const size_t tail = n & 7;
  if (tail > 0) {
    for (size_t b = tail; b-- > 0;) h ^= static_cast<uint64_t>(p[b]) << (8 * b);
    h *= kMul;
  }
  h ^= h >> kShift;
  h *= kMul;
  h ^= h >> kShift;
  return h;
}

int64_t sampler_key_of_int(int64_t id, bool hash_ids) {
  if (!hash_ids) return id;
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof(buf), id);
  return static_cast<int64_t>(graphlearn_hash64(std::string_view(buf, static_cast<size_t>(r.ptr - buf))));
}

std::optional<int64_t> sampler_key_of_text(std::string_view text, bool hash_ids) {
  if (hash_ids) return static_cast<int64_t>(graphlearn_hash64(text));
  if (text.empty()) return 0;
  int64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

bool use_hash_node_id_from_env() {
  const char* v = std::getenv("USE_HASH_NODE_ID");
  return v != nullptr && std::string_view(v) == "1";
}

namespace sampler_table_internal {

enum class FieldType { kInt, kFloat, kString };

const char* type_name(FieldType t) {
  switch (t) {
    case FieldType::kInt: return "int64";
    case FieldType::kFloat: return "float";
    case FieldType::kString: return "string";
  }
  return "?";
}

// graphlearn's io::ToDataType, folded the way its Schema compares types.
std::optional<FieldType> parse_type(std::string_view t) {
  if (t == "int" || t == "int32" || t == "long" || t == "int64") return FieldType::kInt;
  if (t == "float" || t == "double") return FieldType::kFloat;
  if (t == "string") return FieldType::kString;
  return std::nullopt;
}

// Every character of `chars` is a separator (graphlearn's strings::Split).
class CharSet {
 public:
  explicit CharSet(const std::string& chars) {
    std::memset(is_, 0, sizeof(is_));
    for (unsigned char c : chars) is_[c] = true;
    single_ = chars.size() == 1 ? chars[0] : '\0';
    is_single_ = chars.size() == 1;
  }
  bool has(char c) const { return is_[static_cast<unsigned char>(c)]; }
  // First separator in [p, end), or end.
  const char* find(const char* p, const char* end) const {
    if (is_single_) {
      const void* q = std::memchr(p, single_, static_cast<size_t>(end - p));
      return q == nullptr ? end : static_cast<const char*>(q);
    }
    while (p < end && !is_[static_cast<unsigned char>(*p)]) ++p;
    return p;
  }
  // Separators in [p, end).
  size_t count(const char* p, const char* end) const {
    size_t n = 0;
    if (is_single_) {
      while ((p = static_cast<const char*>(std::memchr(p, single_, static_cast<size_t>(end - p)))) != nullptr) {
        ++n;
        ++p;
      }
      return n;
    }
    for (; p < end; ++p) n += is_[static_cast<unsigned char>(*p)] ? 1 : 0;
    return n;
  }

 private:
  bool is_[256];
  char single_ = '\0';
  bool is_single_ = false;
};

std::string printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s.substr(0, 60)) {
    if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > 60) out += "...";
  return out;
}

// One field of a table: its role and what the header declared.
struct FieldSpec {
  std::string role;  // "id", "weight", "attrs", "src id", "dst id"
  FieldType type = FieldType::kInt;
  std::string name;  // from the header (text) or the schema (Parquet)
};

enum class TableKind { kItem, kUser, kEdge };

std::string example_header(TableKind kind, bool with_attrs) {
  switch (kind) {
    case TableKind::kItem: return with_attrs ? "id:int64\\tweight:float\\tattrs:string" : "id:int64\\tweight:float";
    case TableKind::kUser: return "id:int64\\tweight:float";
    case TableKind::kEdge: return "userid:int64\\titemid:int64\\tweight:float";
  }
  return "";
}

const char* table_noun(TableKind kind) {
  switch (kind) {
    case TableKind::kItem: return "item table";
    case TableKind::kUser: return "user table";
    case TableKind::kEdge: return "edge table";
  }
  return "table";
}

// The roles of a table's fields, in order.
std::vector<std::string> roles_of(TableKind kind, bool with_attrs) {
  switch (kind) {
    case TableKind::kItem:
      return with_attrs ? std::vector<std::string>{"id", "weight", "attrs"} : std::vector<std::string>{"id", "weight"};
    case TableKind::kUser: return {"id", "weight"};
    case TableKind::kEdge: return {"src id", "dst id", "weight"};
  }
  return {};
}

struct LoadContext {
  TableKind kind = TableKind::kItem;
  const SamplerTableOptions* options = nullptr;
  std::string where;  // " (data_config.x.input_path)" or ""
};

// Checks declared field types against the roles; `locator` names the header line / schema.
void check_field_types(const std::vector<FieldSpec>& fields, const LoadContext& ctx, const std::string& file,
                       const std::string& locator) {
  for (size_t i = 0; i < fields.size(); ++i) {
    const FieldSpec& f = fields[i];
    const bool is_id = f.role == "id" || f.role == "src id" || f.role == "dst id";
    if (is_id) {
      if (f.type == FieldType::kFloat) {
        throw DataError(fmt::format("{}{} {}: field {} '{}' ({} of the {}) has type {}; ids must be int64{}", file,
                                    ctx.where, locator, i + 1, f.name, f.role, table_noun(ctx.kind), type_name(f.type),
                                    ctx.options->hash_ids ? " or string" : ""));
      }
      if (f.type == FieldType::kString && !ctx.options->hash_ids) {
        throw DataError(
            fmt::format("{}{} {}: field {} '{}' ({} of the {}) holds string ids; set USE_HASH_NODE_ID=1 to hash "
                        "string ids (as TorchEasyRec does), or write integer ids typed int64",
                        file, ctx.where, locator, i + 1, f.name, f.role, table_noun(ctx.kind)));
      }
    } else if (f.role == "weight" && f.type != FieldType::kFloat) {
      throw DataError(fmt::format("{}{} {}: field {} '{}' (weight of the {}) has type {}; declare it float", file,
                                  ctx.where, locator, i + 1, f.name, table_noun(ctx.kind), type_name(f.type)));
    } else if (f.role == "attrs" && f.type != FieldType::kString) {
      throw DataError(fmt::format("{}{} {}: field {} '{}' (attrs of the item table) has type {}; declare it string",
                                  file, ctx.where, locator, i + 1, f.name, type_name(f.type)));
    }
  }
}

// Field count check shared by text and Parquet; returns whether the item attrs field is read.
bool check_field_count(size_t count, const std::vector<std::string>& names, const LoadContext& ctx,
                       const std::string& file, const std::string& locator) {
  const bool want_attrs = ctx.kind == TableKind::kItem && ctx.options->num_attrs > 0;
  size_t expected = roles_of(ctx.kind, want_attrs).size();
  bool read_attrs = want_attrs;
  if (ctx.kind == TableKind::kItem && !want_attrs && count == 3) {
    expected = 3;  // an attrs field without attr_fields: ignored
    read_attrs = false;
  }
  if (count == expected) return read_attrs;
  std::string listed;
  for (size_t i = 0; i < names.size(); ++i) listed += (i ? ", " : "") + ("'" + names[i] + "'");
  if (ctx.kind == TableKind::kItem && want_attrs && count == 2) {
    throw DataError(
        fmt::format("{}{} {}: the item table has no attrs field ({}), but attr_fields lists {} attributes; "
                    "add a third field 'attrs:string' holding them joined by attr_delimiter, or remove attr_fields",
                    file, ctx.where, locator, listed, ctx.options->num_attrs));
  }
  throw DataError(fmt::format("{}{} {}: the {} has {} fields ({}); it needs {}: {}", file, ctx.where, locator,
                              table_noun(ctx.kind), count, listed, expected, example_header(ctx.kind, want_attrs)));
}

// ---- parsed rows -------------------------------------------------------------------------------

// Rows of one table in file order (the chunks of all files concatenated).
struct Rows {
  std::vector<int64_t> a;  // node key, or edge src key
  std::vector<int64_t> b;  // edge dst key
  std::vector<float> weight;
  std::vector<int64_t> attr_offsets{0};  // when attrs are read
  std::string attr_bytes;
};

struct ParseError {
  size_t line_offset = 0;  // byte offset of the failing line's start in the file buffer
  std::string message;     // after "<file> line N: "
};

// Rows of one piece of a text file; attrs stay in the file buffer until the file is merged.
struct Chunk {
  Rows rows;                      // a, b, weight
  std::vector<int64_t> attr_pos;  // start of each row's attrs in the file buffer
  std::vector<uint32_t> attr_len;
  int64_t attr_total = 0;
  std::optional<ParseError> error;
};

bool trim_number(std::string_view* s) {
  while (!s->empty() && (s->front() == ' ')) s->remove_prefix(1);
  while (!s->empty() && (s->back() == ' ')) s->remove_suffix(1);
  if (!s->empty() && s->front() == '+') s->remove_prefix(1);
  return !s->empty();
}

bool parse_int(std::string_view s, int64_t* out) {
  if (!trim_number(&s)) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_float(std::string_view s, float* out) {
  if (!trim_number(&s)) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (r.ec == std::errc::result_out_of_range) {
    *out = std::numeric_limits<float>::infinity();
    return r.ptr == s.data() + s.size();
  }
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

struct TextLayout {
  std::vector<FieldSpec> fields;
  bool read_attrs = false;
  int attrs_field = -1;  // index of the attrs field when present (read or ignored)
};

// Parses [begin, end) of a file buffer (whole lines) into `chunk`.
void parse_text_chunk(const char* base, size_t begin, size_t end, const TextLayout& layout, const LoadContext& ctx,
                      const CharSet& fsep, const CharSet& asep, Chunk* chunk) {
  Rows& rows = chunk->rows;
  const size_t nf = layout.fields.size();
  const bool edge = ctx.kind == TableKind::kEdge;
  const bool hash_ids = ctx.options->hash_ids;
  const size_t num_attrs = ctx.options->num_attrs;
  const size_t approx_rows = (end - begin) / 24 + 16;
  rows.a.reserve(approx_rows);
  if (edge) rows.b.reserve(approx_rows);
  rows.weight.reserve(approx_rows);
  if (layout.read_attrs) {
    chunk->attr_pos.reserve(approx_rows);
    chunk->attr_len.reserve(approx_rows);
  }
  std::string_view f[3];
  const char* p = base + begin;
  const char* const stop = base + end;
  auto fail = [&](const char* line, std::string message) {
    chunk->error = ParseError{static_cast<size_t>(line - base), std::move(message)};
  };
  auto key_of = [&](std::string_view text, size_t field, int64_t* key) -> bool {
    const FieldSpec& spec = layout.fields[field];
    if (spec.type == FieldType::kString) {
      if (text.empty()) return false;
      *key = static_cast<int64_t>(graphlearn_hash64(text));
      return true;
    }
    int64_t v = 0;
    if (!parse_int(text, &v)) return false;
    *key = hash_ids ? sampler_key_of_int(v, true) : v;
    return true;
  };
  auto bad_id = [&](const char* line, size_t field, std::string_view text) {
    const FieldSpec& spec = layout.fields[field];
    fail(line, fmt::format("field {} '{}' ({}): '{}' is not {}; write {}", field + 1, spec.name, spec.role,
                           printable(text), spec.type == FieldType::kString ? "a non-empty id" : "an integer id",
                           spec.type == FieldType::kString ? "the id's text" : "a decimal int64 such as 12345"));
  };
  while (p < stop) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(stop - p)));
    const char* line_end = nl == nullptr ? stop : nl;
    const char* next = nl == nullptr ? stop : nl + 1;
    const char* le = line_end;
    if (le > p && le[-1] == '\r') --le;
    if (le == p) {
      p = next;
      continue;
    }
    // Split into exactly nf fields.
    size_t count = 0;
    const char* q = p;
    while (true) {
      const char* sep = fsep.find(q, le);
      if (count < 3) f[count] = std::string_view(q, static_cast<size_t>(sep - q));
      ++count;
      if (sep == le) break;
      q = sep + 1;
    }
    if (count != nf) {
      fail(p, fmt::format("{} fields where the header has {}; every line needs {} ({}) separated by the "
                          "field delimiter",
                          count, nf, nf, example_header(ctx.kind, layout.read_attrs)));
      return;
    }
    int64_t k0 = 0;
    if (!key_of(f[0], 0, &k0)) return bad_id(p, 0, f[0]);
    size_t wf = 1;
    int64_t k1 = 0;
    if (edge) {
      if (!key_of(f[1], 1, &k1)) return bad_id(p, 1, f[1]);
      wf = 2;
    }
    float w = 0.0f;
    if (!parse_float(f[wf], &w)) {
      fail(p, fmt::format("field {} '{}' (weight): '{}' is not a number; write a finite weight >= 0 such as 1 "
                          "or 0.5",
                          wf + 1, layout.fields[wf].name, printable(f[wf])));
      return;
    }
    if (!std::isfinite(w) || w < 0.0f) {
      fail(p, fmt::format("field {} '{}' (weight): {} is {}; weights must be finite and >= 0", wf + 1,
                          layout.fields[wf].name, printable(f[wf]),
                          std::isnan(w) ? "not a number" : (std::isinf(w) ? "infinite" : "negative")));
      return;
    }
    if (layout.read_attrs) {
      const std::string_view attrs = f[2];
      const size_t got = attrs.empty() ? 0 : asep.count(attrs.data(), attrs.data() + attrs.size()) + 1;
      if (got != num_attrs) {
        fail(p, fmt::format("field 3 '{}' (attrs): '{}' holds {} attributes separated by attr_delimiter, but "
                            "attr_fields lists {}; write exactly one value per attr_fields entry, in that order "
                            "(an empty attrs field holds none)",
                            layout.fields[2].name, printable(attrs), got, num_attrs));
        return;
      }
      if (attrs.size() > 0xffffffffu) {
        fail(p, fmt::format("field 3 '{}' (attrs) is {} bytes long; at most 4 GiB per item", layout.fields[2].name,
                            attrs.size()));
        return;
      }
      chunk->attr_pos.push_back(attrs.data() - base);
      chunk->attr_len.push_back(static_cast<uint32_t>(attrs.size()));
      chunk->attr_total += static_cast<int64_t>(attrs.size());
    }
    rows.a.push_back(k0);
    if (edge) rows.b.push_back(k1);
    rows.weight.push_back(w);
    p = next;
  }
}

int thread_count(const SamplerTableOptions& options) {
  int n = options.num_threads;
  if (n <= 0) {
    n = static_cast<int>(std::thread::hardware_concurrency());
    if (n <= 0) n = 1;
  }
  return std::min(n, 16);
}

// The bytes of a whole file: mapped read-only (no copy, no zero-filled buffer), or read into
// memory where it cannot be mapped.
class FileBytes {
 public:
  explicit FileBytes(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw IoError(fmt::format("cannot open sampler table {}: {}", path, std::strerror(errno)));
    struct stat st;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        (void)::madvise(p, static_cast<size_t>(st.st_size), MADV_SEQUENTIAL);
        map_ = p;
        size_ = static_cast<size_t>(st.st_size);
        ::close(fd);
        return;
      }
    }
    char buf[1 << 16];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof(buf))) > 0) copy_.append(buf, static_cast<size_t>(n));
    const int err = errno;
    ::close(fd);
    if (n < 0) throw IoError(fmt::format("cannot read sampler table {}: {}", path, std::strerror(err)));
  }
  ~FileBytes() {
    if (map_ != nullptr) ::munmap(map_, size_);
  }
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  std::string_view view() const {
    return map_ != nullptr ? std::string_view(static_cast<const char*>(map_), size_) : std::string_view(copy_);
  }

 private:
  void* map_ = nullptr;
  size_t size_ = 0;
  std::string copy_;
};

size_t line_number(std::string_view data, size_t offset) {
  return 1 + static_cast<size_t>(std::count(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

// Appends the chunks of one text file (in order) to *out; attrs are copied out of the file
// buffer on the chunks' threads, into one allocation.
void merge_chunks(std::string_view data, std::vector<Chunk>* chunks, bool attrs, Rows* out) {
  size_t rows = 0, brows = 0;
  int64_t bytes = 0;
  for (const auto& c : *chunks) {
    rows += c.rows.a.size();
    brows += c.rows.b.size();
    bytes += c.attr_total;
  }
  reserve_huge(&out->a, out->a.size() + rows);
  reserve_huge(&out->b, out->b.size() + brows);
  reserve_huge(&out->weight, out->weight.size() + rows);
  for (auto& c : *chunks) {
    out->a.insert(out->a.end(), c.rows.a.begin(), c.rows.a.end());
    out->b.insert(out->b.end(), c.rows.b.begin(), c.rows.b.end());
    out->weight.insert(out->weight.end(), c.rows.weight.begin(), c.rows.weight.end());
    c.rows = Rows();
  }
  if (!attrs) return;
  const size_t byte_base = out->attr_bytes.size();
  const size_t offset_base = out->attr_offsets.size();  // offsets[offset_base - 1] == byte_base
  reserve_huge(&out->attr_bytes, byte_base + static_cast<size_t>(bytes) + NodeTable::kAttrPadding);
  out->attr_bytes.resize(byte_base + static_cast<size_t>(bytes));
  reserve_huge(&out->attr_offsets, offset_base + rows);
  out->attr_offsets.resize(offset_base + rows);
  std::vector<std::thread> pool;
  size_t row0 = 0;
  size_t byte0 = byte_base;
  for (auto& c : *chunks) {
    auto copy = [data, out, &c, row0, byte0, offset_base] {
      char* dst = out->attr_bytes.data();
      int64_t* off = out->attr_offsets.data() + offset_base + row0;
      size_t at = byte0;
      for (size_t r = 0; r < c.attr_pos.size(); ++r) {
        std::memcpy(dst + at, data.data() + c.attr_pos[r], c.attr_len[r]);
        at += c.attr_len[r];
        off[r] = static_cast<int64_t>(at);
      }
    };
    if (&c == &chunks->back()) {
      copy();
    } else {
      pool.emplace_back(copy);
    }
    row0 += c.attr_pos.size();
    byte0 += static_cast<size_t>(c.attr_total);
  }
  for (auto& t : pool) t.join();
}

// One text file: header, then the body parsed on several threads. Appends to *out.
bool load_text_file(const std::string& file, const LoadContext& ctx, Rows* out) {
  const FileBytes bytes(file);
  const std::string_view data = bytes.view();
  const CharSet fsep(ctx.options->field_delimiter);
  const CharSet asep(ctx.options->attr_delimiter);
  const size_t header_end_nl = data.find('\n');
  const size_t header_end = header_end_nl == std::string_view::npos ? data.size() : header_end_nl;
  std::string_view header(data.data(), header_end);
  if (!header.empty() && header.back() == '\r') header.remove_suffix(1);
  const bool want_attrs = ctx.kind == TableKind::kItem && ctx.options->num_attrs > 0;
  if (header.empty()) {
    throw DataError(
        fmt::format("{}{} line 1: the {} has no header; the first line must declare the fields, "
                    "such as '{}'",
                    file, ctx.where, table_noun(ctx.kind), example_header(ctx.kind, want_attrs)));
  }
  // Header: name:type per field.
  TextLayout layout;
  std::vector<std::string> names;
  {
    const char* p = header.data();
    const char* end = header.data() + header.size();
    while (true) {
      const char* sep = fsep.find(p, end);
      const std::string_view item(p, static_cast<size_t>(sep - p));
      const size_t colon = item.find(':');
      if (colon == std::string_view::npos || item.find(':', colon + 1) != std::string_view::npos) {
        throw DataError(
            fmt::format("{}{} line 1: header field {} '{}' is not 'name:type'; the first line must "
                        "declare the fields, such as '{}'",
                        file, ctx.where, names.size() + 1, printable(item), example_header(ctx.kind, want_attrs)));
      }
      const std::string type_text = trim(std::string(item.substr(colon + 1)));
      const auto type = parse_type(type_text);
      if (!type) {
        throw DataError(
            fmt::format("{}{} line 1: header field {} '{}' has unknown type '{}'; use one of int, "
                        "int32, long, int64, float, double, string",
                        file, ctx.where, names.size() + 1, printable(item), printable(type_text)));
      }
      names.emplace_back(item.substr(0, colon));
      layout.fields.push_back(FieldSpec{"", *type, names.back()});
      if (sep == end) break;
      p = sep + 1;
    }
  }
  layout.read_attrs = check_field_count(layout.fields.size(), names, ctx, file, "line 1");
  const auto roles = roles_of(ctx.kind, ctx.kind == TableKind::kItem && layout.fields.size() == 3);
  for (size_t i = 0; i < layout.fields.size(); ++i) layout.fields[i].role = roles[i];
  check_field_types(layout.fields, ctx, file, "line 1");

  // Body, cut at line starts into one piece per thread.
  const size_t body = header_end_nl == std::string_view::npos ? data.size() : header_end_nl + 1;
  const size_t size = data.size() - body;
  const int threads = static_cast<int>(
      std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(thread_count(*ctx.options)), size / (1 << 20))));
  std::vector<size_t> cuts{body};
  for (int t = 1; t < threads; ++t) {
    size_t c = body + size * static_cast<size_t>(t) / static_cast<size_t>(threads);
    c = std::max(c, cuts.back());
    const size_t nl = data.find('\n', c);
    c = nl == std::string_view::npos ? data.size() : nl + 1;
    cuts.push_back(c);
  }
  cuts.push_back(data.size());
  std::vector<Chunk> chunks(static_cast<size_t>(threads));
  {
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) {
      pool.emplace_back(
          [&, t] { parse_text_chunk(data.data(), cuts[t], cuts[t + 1], layout, ctx, fsep, asep, &chunks[t]); });
    }
    parse_text_chunk(data.data(), cuts[0], cuts[1], layout, ctx, fsep, asep, &chunks[0]);
    for (auto& th : pool) th.join();
  }
  for (auto& c : chunks) {
    if (c.error) {
      throw DataError(
          fmt::format("{}{} line {}: {}", file, ctx.where, line_number(data, c.error->line_offset), c.error->message));
    }
  }
  merge_chunks(data, &chunks, layout.read_attrs, out);
  return layout.read_attrs;
}

// One Parquet file: positional scalar columns. Appends to *out.
bool load_parquet_file(const std::string& file, const LoadContext& ctx, Rows* out) {
  parquet::ReaderOptions ro;
  ro.num_threads = std::min(thread_count(*ctx.options), 4);
  auto reader = parquet::FileReader::open(file, ro);
  const parquet::Schema& schema = reader->schema();
  std::vector<std::string> names;
  std::vector<FieldSpec> fields;
  std::vector<int> leaves;
  for (int node : schema.fields()) {
    const parquet::SchemaNode& n = schema.nodes()[static_cast<size_t>(node)];
    names.push_back(n.name);
    if (schema.field_kind(node) != parquet::FieldKind::kPrimitive) {
      throw DataError(
          fmt::format("{}{} schema: column {} '{}' is not a scalar; sampler tables hold scalar id, "
                      "weight and attrs columns ({})",
                      file, ctx.where, names.size(), n.name, example_header(ctx.kind, ctx.options->num_attrs > 0)));
    }
    FieldType t = FieldType::kString;
    switch (n.type) {
      case parquet::PhysicalType::kInt32:
      case parquet::PhysicalType::kInt64: t = FieldType::kInt; break;
      case parquet::PhysicalType::kFloat:
      case parquet::PhysicalType::kDouble: t = FieldType::kFloat; break;
      case parquet::PhysicalType::kByteArray: t = FieldType::kString; break;
      default:
        throw DataError(
            fmt::format("{}{} schema: column {} '{}' has an unsupported physical type; use INT64 ids, "
                        "FLOAT/DOUBLE weights and STRING attrs",
                        file, ctx.where, names.size(), n.name));
    }
    fields.push_back(FieldSpec{"", t, n.name});
    leaves.push_back(n.leaf_index);
  }
  const bool read_attrs = check_field_count(fields.size(), names, ctx, file, "schema");
  const auto roles = roles_of(ctx.kind, ctx.kind == TableKind::kItem && fields.size() == 3);
  for (size_t i = 0; i < fields.size(); ++i) fields[i].role = roles[i];
  check_field_types(fields, ctx, file, "schema");
  const bool edge = ctx.kind == TableKind::kEdge;
  const size_t wf = edge ? 2 : 1;
  std::vector<int> wanted;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i == 2 && !edge && !read_attrs) continue;
    wanted.push_back(leaves[i]);
  }
  const CharSet asep(ctx.options->attr_delimiter);
  const size_t num_attrs = ctx.options->num_attrs;
  const bool hash_ids = ctx.options->hash_ids;
  const size_t file_rows = static_cast<size_t>(reader->num_rows());
  reserve_huge(&out->a, out->a.size() + file_rows);
  if (edge) reserve_huge(&out->b, out->b.size() + file_rows);
  reserve_huge(&out->weight, out->weight.size() + file_rows);
  if (read_attrs) reserve_huge(&out->attr_offsets, out->attr_offsets.size() + file_rows);
  int64_t row0 = 0;
  for (int rg = 0; rg < reader->num_row_groups(); ++rg) {
    parquet::Table t = reader->read_row_group(rg, wanted);
    auto at = [&](size_t field) -> const parquet::ColumnData& {
      for (size_t j = 0; j < wanted.size(); ++j) {
        if (wanted[j] == leaves[field]) return t.columns[j];
      }
      throw DataError("internal: column not read");
    };
    auto keys_of = [&](size_t field, std::vector<int64_t>* dst) {
      const parquet::ColumnData& c = at(field);
      for (int64_t r = 0; r < t.num_rows; ++r) {
        if (c.is_null(r)) {
          throw DataError(fmt::format("{}{} row {}: column {} '{}' ({}) is null; every row needs an id", file,
                                      ctx.where, row0 + r, field + 1, fields[field].name, fields[field].role));
        }
        int64_t key = 0;
        if (c.type() == parquet::PhysicalType::kByteArray) {
          const std::string_view s = c.bytes(r);
          if (s.empty()) {
            throw DataError(fmt::format("{}{} row {}: column {} '{}' ({}) is empty; every row needs an id", file,
                                        ctx.where, row0 + r, field + 1, fields[field].name, fields[field].role));
          }
          key = static_cast<int64_t>(graphlearn_hash64(s));
        } else {
          const int64_t v = c.type() == parquet::PhysicalType::kInt32 ? c.data<int32_t>()[r] : c.data<int64_t>()[r];
          key = hash_ids ? sampler_key_of_int(v, true) : v;
        }
        dst->push_back(key);
      }
    };
    keys_of(0, &out->a);
    if (edge) keys_of(1, &out->b);
    {
      const parquet::ColumnData& c = at(wf);
      for (int64_t r = 0; r < t.num_rows; ++r) {
        if (c.is_null(r)) {
          throw DataError(fmt::format("{}{} row {}: column {} '{}' (weight) is null; write a finite weight >= 0", file,
                                      ctx.where, row0 + r, wf + 1, fields[wf].name));
        }
        const float w =
            c.type() == parquet::PhysicalType::kFloat ? c.data<float>()[r] : static_cast<float>(c.data<double>()[r]);
        if (!std::isfinite(w) || w < 0.0f) {
          throw DataError(fmt::format("{}{} row {}: column {} '{}' (weight) is {}; weights must be finite and >= 0",
                                      file, ctx.where, row0 + r, wf + 1, fields[wf].name, w));
        }
        out->weight.push_back(w);
      }
    }
    if (read_attrs) {
      const parquet::ColumnData& c = at(2);
      for (int64_t r = 0; r < t.num_rows; ++r) {
        const std::string_view s = c.is_null(r) ? std::string_view() : c.bytes(r);
        const size_t got = s.empty() ? 0 : asep.count(s.data(), s.data() + s.size()) + 1;
        if (got != num_attrs) {
          throw DataError(fmt::format(
              "{}{} row {}: column 3 '{}' (attrs): '{}' holds {} attributes separated by attr_delimiter, but "
              "attr_fields lists {}; write exactly one value per attr_fields entry, in that order",
              file, ctx.where, row0 + r, fields[2].name, printable(s), got, num_attrs));
        }
        out->attr_bytes.append(s.data(), s.size());
        out->attr_offsets.push_back(static_cast<int64_t>(out->attr_bytes.size()));
      }
    }
    row0 += t.num_rows;
  }
  return read_attrs;
}

bool is_parquet(const std::string& file) {
  FILE* fp = std::fopen(file.c_str(), "rb");
  if (fp == nullptr) throw IoError(fmt::format("cannot open sampler table {}: {}", file, std::strerror(errno)));
  char magic[4] = {0, 0, 0, 0};
  const size_t n = std::fread(magic, 1, 4, fp);
  std::fclose(fp);
  return n == 4 && std::memcmp(magic, "PAR1", 4) == 0;
}

std::vector<std::string> table_files(const std::string& path, const LoadContext& ctx) {
  const std::string p = trim(path);
  if (p.empty()) {
    throw ConfigError(fmt::format("{}: the {} path is empty; set it to the table file",
                                  ctx.options->config_field.empty() ? "sampler" : ctx.options->config_field,
                                  table_noun(ctx.kind)));
  }
  if (p.rfind("odps://", 0) == 0) {
    throw NotSupportedError(
        fmt::format("sampler table {} on MaxCompute (odps://); export it to a local text or "
                    "Parquet file",
                    p));
  }
  struct stat st;
  if (::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    std::vector<std::string> files;
    DIR* d = ::opendir(p.c_str());
    if (d == nullptr) throw IoError(fmt::format("cannot list sampler table directory {}", p));
    while (const dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      const std::string full = p + "/" + e->d_name;
      struct stat fs;
      if (::stat(full.c_str(), &fs) == 0 && S_ISREG(fs.st_mode)) files.push_back(full);
    }
    ::closedir(d);
    std::sort(files.begin(), files.end());
    if (files.empty()) throw DataError(fmt::format("sampler table directory {}{} holds no files", p, ctx.where));
    return files;
  }
  try {
    return expand_input_path(p);
  } catch (const DataError& e) {
    throw DataError(fmt::format("{}{}: {}", table_noun(ctx.kind), ctx.where, e.what()));
  }
}

Rows load_rows(const std::string& path, const LoadContext& ctx, std::vector<std::string>* files, bool* read_attrs) {
  *files = table_files(path, ctx);
  Rows rows;
  *read_attrs = false;
  for (const auto& file : *files) {
    const bool attrs = is_parquet(file) ? load_parquet_file(file, ctx, &rows) : load_text_file(file, ctx, &rows);
    *read_attrs = attrs;
  }
  return rows;
}

// ---- key index (open addressing; slot = index + 1, 0 empty) ----------------------------------

uint64_t index_capacity(size_t n) {
  uint64_t cap = 16;
  while (cap < n + n / 3 + 1) cap <<= 1;
  return cap;
}

inline uint64_t slot_of(int64_t key, uint64_t mask) { return splitmix64(static_cast<uint64_t>(key)) & mask; }

// Index of `key` among keys[0], keys[stride], keys[2 * stride], ..., or -1.
inline int64_t index_find(const std::vector<uint32_t>& slots, uint64_t mask, const int64_t* keys, int64_t key,
                          size_t stride = 1) {
  if (slots.empty()) return -1;
  for (uint64_t s = slot_of(key, mask);; s = (s + 1) & mask) {
    const uint32_t v = slots[s];
    if (v == 0) return -1;
    if (keys[(v - 1) * stride] == key) return static_cast<int64_t>(v - 1);
  }
}

// Inserts keys[idx] unless present; returns the existing index or -1 when inserted.
inline int64_t index_insert(std::vector<uint32_t>* slots, uint64_t mask, const int64_t* keys, uint32_t idx) {
  const int64_t key = keys[idx];
  for (uint64_t s = slot_of(key, mask);; s = (s + 1) & mask) {
    const uint32_t v = (*slots)[s];
    if (v == 0) {
      (*slots)[s] = idx + 1;
      return -1;
    }
    if (keys[v - 1] == key) return static_cast<int64_t>(v - 1);
  }
}

// index_find for q[0, n) into out[0, n), with the slot and key loads of later queries in flight.
void index_find_batch(const std::vector<uint32_t>& slots, uint64_t mask, const int64_t* keys, const int64_t* q,
                      size_t n, int64_t* out, size_t stride = 1) {
  if (slots.empty()) {
    std::fill(out, out + n, -1);
    return;
  }
  constexpr size_t kDist = 8;
  uint64_t pos[2 * kDist];
  for (size_t i = 0; i < n + 2 * kDist; ++i) {
    if (i >= 2 * kDist) {  // resolve query i - 2D (its slot and key were prefetched)
      const size_t j = i - 2 * kDist;
      if (j < n) {
        out[j] = -1;
        for (uint64_t s = pos[j % (2 * kDist)];; s = (s + 1) & mask) {
          const uint32_t v = slots[s];
          if (v == 0) break;
          if (keys[(v - 1) * stride] == q[j]) {
            out[j] = static_cast<int64_t>(v - 1);
            break;
          }
        }
      }
    }
    if (i >= kDist && i - kDist < n) {  // query i - D: its slot is loaded, prefetch the key it holds
      const uint32_t v = slots[pos[(i - kDist) % (2 * kDist)]];
      if (v != 0) __builtin_prefetch(keys + (v - 1) * stride);
    }
    if (i < n) {
      const uint64_t s = slot_of(q[i], mask);
      pos[i % (2 * kDist)] = s;
      __builtin_prefetch(&slots[s]);
    }
  }
}

// Distinct keys of keys[0, n) in first-appearance order, compacted in place into keys;
// keep[i] (when given) says whether row i was kept. Builds the index over the result.
size_t dedup_in_place(int64_t* keys, size_t n, std::vector<uint32_t>* slots, uint64_t* mask,
                      std::vector<uint8_t>* keep) {
  const uint64_t cap = index_capacity(n);
  slots->clear();
  reserve_huge(slots, cap);
  slots->assign(cap, 0);
  *mask = cap - 1;
  if (keep) keep->assign(n, 1);
  size_t m = 0;
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) __builtin_prefetch(&(*slots)[slot_of(keys[i + kAhead], *mask)]);
    keys[m] = keys[i];
    if (index_insert(slots, *mask, keys, static_cast<uint32_t>(m)) < 0) {
      ++m;
    } else if (keep) {
      (*keep)[i] = 0;
    }
  }
  return m;
}

}  // namespace sampler_table_internal

class SamplerTableLoader {
 public:
  static std::shared_ptr<const NodeTable> load_nodes(const std::string& path, NodeTable::Kind kind,
                                                     const SamplerTableOptions& options) {
    using namespace sampler_table_internal;
    LoadContext ctx;
    ctx.kind = kind == NodeTable::Kind::kItem ? TableKind::kItem : TableKind::kUser;
    SamplerTableOptions opts = options;
    if (ctx.kind == TableKind::kUser) opts.num_attrs = 0;
    ctx.options = &opts;
    ctx.where = options.config_field.empty() ? "" : " (" + options.config_field + ")";
    if (options.field_delimiter.empty()) {
      throw ConfigError(fmt::format("{}: field_delimiter is empty; leave it unset for a tab",
                                    options.config_field.empty() ? "sampler" : options.config_field));
    }
    if (opts.num_attrs > 0 && options.attr_delimiter.empty()) {
      throw ConfigError(fmt::format("{}: attr_delimiter is empty; leave it unset for ':'",
                                    options.config_field.empty() ? "sampler" : options.config_field));
    }
    // One attribute is never split: an attr_delimiter equal to field_delimiter (TorchEasyRec's
    // hstu_match example sets both to a tab) is then harmless.
    if (opts.num_attrs == 1 && options.attr_delimiter.find_first_of(options.field_delimiter) != std::string::npos) {
      opts.attr_delimiter.clear();
    }
    if (opts.num_attrs > 1 && options.attr_delimiter.find_first_of(options.field_delimiter) != std::string::npos) {
      throw ConfigError(
          fmt::format("{}: attr_delimiter '{}' shares a character with field_delimiter '{}'; use "
                      "different delimiters",
                      options.config_field.empty() ? "sampler" : options.config_field,
                      printable(options.attr_delimiter), printable(options.field_delimiter)));
    }
    auto table = std::make_shared<NodeTable>();
    table->path_ = path;
    bool read_attrs = false;
    Rows rows = load_rows(path, ctx, &table->files_, &read_attrs);
    const size_t n = rows.a.size();
    if (n >= 0xffffffffULL) {
      throw DataError(fmt::format("{}{}: {} rows; at most 4294967294 rows are supported", path, ctx.where, n));
    }
    std::vector<uint8_t> keep;
    const size_t m = dedup_in_place(rows.a.data(), n, &table->slots_, &table->mask_, &keep);
    table->duplicate_rows_ = static_cast<int64_t>(n - m);
    // Records of the kept rows (the index refers to them by position); a repeated id's row is
    // skipped, its attrs bytes stay unused in the buffer.
    if (read_attrs && rows.attr_bytes.size() >= (uint64_t{1} << (64 - NodeTable::kAttrLengthBits))) {
      throw DataError(
          fmt::format("{}{}: {} bytes of attrs; at most 1 TiB are supported", path, ctx.where, rows.attr_bytes.size()));
    }
    reserve_huge(&table->records_, m);
    table->records_.resize(m);
    if (m < n) reserve_huge(&table->weights_, m);
    for (size_t i = 0, j = 0; i < n; ++i) {
      if (m < n && !keep[i]) continue;
      NodeTable::Record& r = table->records_[j];
      r.key = rows.a[j];
      if (read_attrs) {
        const uint64_t b = static_cast<uint64_t>(rows.attr_offsets[i]);
        const uint64_t len = static_cast<uint64_t>(rows.attr_offsets[i + 1]) - b;
        if (len >= (uint64_t{1} << NodeTable::kAttrLengthBits)) {
          throw DataError(fmt::format("{}{}: the attrs of item {} are {} bytes long; at most 16 MiB per item", path,
                                      ctx.where, r.key, len));
        }
        r.attrs = b << NodeTable::kAttrLengthBits | len;
      }
      if (m < n) table->weights_.push_back(rows.weight[i]);
      ++j;
    }
    rows.a = std::vector<int64_t>();
    rows.attr_offsets = std::vector<int64_t>();
    if (m == n) table->weights_ = std::move(rows.weight);
    if (read_attrs) table->attr_bytes_ = std::move(rows.attr_bytes);
    table->num_attrs_ = read_attrs ? opts.num_attrs : 0;
    if (read_attrs) {
      // Readable bytes after the last attrs, so that copies may move 16 bytes at a time.
      table->attr_bytes_.append(NodeTable::kAttrPadding, '\0');
      if (table->attr_bytes_.capacity() > table->attr_bytes_.size() / 4 * 5 + 4096) {  // grown by appends
        std::string exact;
        reserve_huge(&exact, table->attr_bytes_.size());
        exact.assign(table->attr_bytes_);
        table->attr_bytes_.swap(exact);
      }
    }
    if (table->duplicate_rows_ > 0) {
      log::warning("sampler {} {}: {} rows repeat an earlier id and are ignored (the first row of an id is kept)",
                   table_noun(ctx.kind), path, table->duplicate_rows_);
    }
    return table;
  }

  static std::shared_ptr<const EdgeTable> load_edges(const std::string& path, EdgeTable::Order order,
                                                     const SamplerTableOptions& options) {
    using namespace sampler_table_internal;
    LoadContext ctx;
    ctx.kind = TableKind::kEdge;
    SamplerTableOptions opts = options;
    opts.num_attrs = 0;
    ctx.options = &opts;
    ctx.where = options.config_field.empty() ? "" : " (" + options.config_field + ")";
    if (options.field_delimiter.empty()) {
      throw ConfigError(fmt::format("{}: field_delimiter is empty; leave it unset for a tab",
                                    options.config_field.empty() ? "sampler" : options.config_field));
    }
    auto table = std::make_shared<EdgeTable>();
    table->path_ = path;
    bool read_attrs = false;
    Rows rows = load_rows(path, ctx, &table->files_, &read_attrs);
    const size_t n = rows.a.size();
    if (n >= 0xffffffffULL) {
      throw DataError(fmt::format("{}{}: {} edges; at most 4294967294 edges are supported", path, ctx.where, n));
    }
    // Sources in first-appearance order, and each edge's source row.
    std::vector<int64_t> src;
    reserve_huge(&src, n);
    src.assign(rows.a.begin(), rows.a.end());
    const size_t num_src = dedup_in_place(src.data(), n, &table->slots_, &table->mask_, nullptr);
    src.resize(num_src);
    src.shrink_to_fit();
    table->src_keys_ = std::move(src);
    std::vector<int64_t> found(n);
    index_find_batch(table->slots_, table->mask_, table->src_keys_.data(), rows.a.data(), n, found.data());
    std::vector<uint32_t> row_of(found.begin(), found.end());
    found = std::vector<int64_t>();
    reserve_huge(&table->row_offsets_, num_src + 1);
    table->row_offsets_.assign(num_src + 1, 0);
    for (size_t e = 0; e < n; ++e) ++table->row_offsets_[row_of[e] + 1];
    for (size_t r = 0; r < num_src; ++r) table->row_offsets_[r + 1] += table->row_offsets_[r];
    reserve_huge(&table->dst_, n);
    table->dst_.resize(n);
    reserve_huge(&table->weights_, n);
    table->weights_.resize(n);
    {
      std::vector<int64_t> fill(table->row_offsets_.begin(), table->row_offsets_.end() - 1);
      for (size_t e = 0; e < n; ++e) {
        const int64_t at = fill[row_of[e]]++;
        table->dst_[static_cast<size_t>(at)] = rows.b[e];
        table->weights_[static_cast<size_t>(at)] = rows.weight[e];
      }
    }
    if (order == EdgeTable::Order::kWeightDescending) {
      std::vector<std::pair<float, int64_t>> tmp;
      for (size_t r = 0; r < num_src; ++r) {
        const size_t b = static_cast<size_t>(table->row_offsets_[r]),
                     e = static_cast<size_t>(table->row_offsets_[r + 1]);
        bool sorted = true;
        for (size_t i = b + 1; i < e && sorted; ++i) sorted = table->weights_[i - 1] >= table->weights_[i];
        if (sorted) continue;
        tmp.clear();
        for (size_t i = b; i < e; ++i) tmp.emplace_back(table->weights_[i], table->dst_[i]);
        std::stable_sort(tmp.begin(), tmp.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
        for (size_t i = b; i < e; ++i) {
          table->weights_[i] = tmp[i - b].first;
          table->dst_[i] = tmp[i - b].second;
        }
      }
    }
    // Distinct destinations in first-appearance (file) order.
    {
      std::vector<uint32_t> slots;
      uint64_t mask = 0;
      std::vector<int64_t> dst = std::move(rows.b);
      const size_t m = dedup_in_place(dst.data(), dst.size(), &slots, &mask, nullptr);
      dst.resize(m);
      dst.shrink_to_fit();
      table->distinct_dst_ = std::move(dst);
    }
    return table;
  }
};

std::shared_ptr<const NodeTable> NodeTable::load(const std::string& path, Kind kind,
                                                 const SamplerTableOptions& options) {
  return SamplerTableLoader::load_nodes(path, kind, options);
}

int64_t NodeTable::find(int64_t key) const {
  static_assert(sizeof(Record) == 2 * sizeof(int64_t) && offsetof(Record, key) == 0, "keys at stride 2");
  return sampler_table_internal::index_find(slots_, mask_, reinterpret_cast<const int64_t*>(records_.data()), key, 2);
}

void NodeTable::find_batch(const int64_t* keys, size_t n, int64_t* out) const {
  using namespace sampler_table_internal;
  index_find_batch(slots_, mask_, reinterpret_cast<const int64_t*>(records_.data()), keys, n, out, 2);
}

int64_t NodeTable::memory_bytes() const {
  return static_cast<int64_t>(records_.capacity() * sizeof(Record) + weights_.capacity() * 4 + attr_bytes_.capacity() +
                              slots_.capacity() * 4);
}

std::shared_ptr<const EdgeTable> EdgeTable::load(const std::string& path, Order order,
                                                 const SamplerTableOptions& options) {
  return SamplerTableLoader::load_edges(path, order, options);
}

EdgeTable::Range EdgeTable::edges_of(int64_t src_key) const {
  using namespace sampler_table_internal;
  const int64_t r = index_find(slots_, mask_, src_keys_.data(), src_key);
  if (r < 0) return {};
  return Range{row_offsets_[static_cast<size_t>(r)], row_offsets_[static_cast<size_t>(r) + 1]};
}

void EdgeTable::ranges_of(const int64_t* src_keys, size_t n, Range* out, std::vector<int64_t>* rows) const {
  using namespace sampler_table_internal;
  rows->resize(n);
  index_find_batch(slots_, mask_, src_keys_.data(), src_keys, n, rows->data());
  constexpr size_t kDist = 16;
  for (size_t i = 0; i < n; ++i) {
    if (i + kDist < n && (*rows)[i + kDist] >= 0)
      __builtin_prefetch(&row_offsets_[static_cast<size_t>((*rows)[i + kDist])]);
    const int64_t r = (*rows)[i];
    out[i] = r < 0 ? Range{} : Range{row_offsets_[static_cast<size_t>(r)], row_offsets_[static_cast<size_t>(r) + 1]};
  }
}

int64_t EdgeTable::memory_bytes() const {
  return static_cast<int64_t>(src_keys_.capacity() * 8 + row_offsets_.capacity() * 8 + dst_.capacity() * 8 +
                              weights_.capacity() * 4 + distinct_dst_.capacity() * 8 + slots_.capacity() * 4);
}

}  // namespace tzrec::data
