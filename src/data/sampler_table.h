// The tables of TorchEasyRec's negative samplers, loaded in process (no torch): node tables
// (items, users) and edge tables (user -> item positive or hard-negative edges), from
// graphlearn's local text format or from Parquet (docs/tzrec-compatibility.md §6.5).
//
// Local text format (graphlearn's LocalFileSystem), fields separated by the sampler's
// field_delimiter (default a tab; every character of it separates fields), lines by '\n'
// (a trailing '\r' is dropped, blank lines are skipped). The first line of each file is a typed
// header "name:type" per field; names are free, the fields are positional:
//   items  id, weight[, attrs]    "id:int64\tweight:float\tattrs:string"
//   users  id, weight             "id:int64\tweight:float"
//   edges  src, dst, weight       "userid:int64\titemid:int64\tweight:float"
// Types as graphlearn reads them: int / int32 / long / int64 (integers), float / double (reals),
// string. Ids must be integer-typed unless ids are hashed (USE_HASH_NODE_ID=1), when they may
// also be strings. attrs is a string: the item's attr_fields values joined by attr_delimiter
// (every character of it separates attributes, as graphlearn splits); it must hold exactly
// attr_fields.size() values (an empty attrs string holds none). An item table with an attrs
// field read without attr_fields ignores it.
//
// Parquet tables: the same fields, positional, as top-level scalar columns (names free): ids
// INT32 / INT64 (or BYTE_ARRAY strings when hashed), weights FLOAT / DOUBLE, attrs BYTE_ARRAY;
// a null id or weight is an error, a null attrs is the empty string. A file is Parquet when it
// starts with "PAR1".
//
// Ids become 64-bit keys: the integer itself, or with hashed ids graphlearn's Hash64
// (MurmurHash64A, seed 0xDECAFCAFFE) of the id's text (for integer-typed fields the decimal
// digits of the value). Node tables keep the first row of an id (graphlearn drops later ones).
// Weights must be finite and >= 0.
//
// A path is a file, a directory (its files in name order, hidden files skipped), or a comma
// list / glob of files (data::expand_input_path). Text files are mapped whole and parsed on
// several threads (std::from_chars; no allocation per row); attribute strings are kept in one
// byte buffer. Large arrays are advised for transparent huge pages before they are filled.
// Tables are immutable after loading and are shared read-only (std::shared_ptr<const ...>) by
// every loader thread.
//
// Errors: DataError naming the file, the line (text; 1-based, the header is line 1) or row
// (Parquet; 0-based) and the field, saying how to fix it (also for a path that matches no file);
// IoError when a file cannot be read; ConfigError naming options.config_field for an empty path
// or delimiter; NotSupportedError for odps:// tables.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tzrec::data {

// graphlearn's Hash64 (MurmurHash64A with seed 0xDECAFCAFFE), the key of a hashed id.
uint64_t graphlearn_hash64(std::string_view text);

// The key of an integer id: itself, or with hash_ids the hash of its decimal digits (a string
// id's key is graphlearn_hash64 of its text).
int64_t sampler_key_of_int(int64_t id, bool hash_ids);
// The key of an id given as text (a data cell): with hash_ids graphlearn_hash64 of the text;
// otherwise the integer it holds, 0 for an empty text (TorchEasyRec's fill_null(0)), nullopt
// when it is not an integer.
std::optional<int64_t> sampler_key_of_text(std::string_view text, bool hash_ids);

// True when env USE_HASH_NODE_ID is "1" (TorchEasyRec's switch for hashed string ids).
bool use_hash_node_id_from_env();

struct SamplerTableOptions {
  std::string field_delimiter = "\t";  // text tables
  std::string attr_delimiter = ":";
  size_t num_attrs = 0;   // attributes per item (attr_fields.size()); 0: none read
  bool hash_ids = false;  // USE_HASH_NODE_ID=1
  int num_threads = 0;    // parse threads; 0: hardware concurrency (at most 16)
  // The config field holding the path, named in messages ("data_config.negative_sampler.input_path").
  std::string config_field;
};

// Item or user table.
class NodeTable {
 public:
  enum class Kind { kItem, kUser };

  // Loads every file of `path`. Items read attrs when options.num_attrs > 0 (then the attrs field
  // is required). Throws DataError / IoError as described above.
  static std::shared_ptr<const NodeTable> load(const std::string& path, Kind kind, const SamplerTableOptions& options);

  // One node: its key and where its attrs are, in one 16-byte record (one cache line read per
  // sampled node).
  struct Record {
    int64_t key = 0;
    uint64_t attrs = 0;  // attrs start in the byte buffer << 24 | length (< 16 MiB)
  };
  static constexpr int kAttrLengthBits = 24;

  int64_t size() const { return static_cast<int64_t>(records_.size()); }
  int64_t key(int64_t i) const { return records_[static_cast<size_t>(i)].key; }
  const Record* records() const { return records_.data(); }
  const std::vector<float>& weights() const { return weights_; }
  // The raw attrs string of node i (empty when the table has no attrs).
  std::string_view attrs(int64_t i) const { return attrs_of(records_[static_cast<size_t>(i)]); }
  std::string_view attrs_of(const Record& r) const {
    return std::string_view(attr_bytes_.data() + (r.attrs >> kAttrLengthBits),
                            static_cast<size_t>(r.attrs & ((uint64_t{1} << kAttrLengthBits) - 1)));
  }
  bool has_attrs() const { return num_attrs_ > 0; }
  size_t num_attrs() const { return num_attrs_; }
  // Addresses for prefetching: node i's record, and the start of its attrs.
  const void* record_address(int64_t i) const { return records_.data() + i; }
  const char* attrs_address(int64_t i) const {
    return attr_bytes_.data() + (records_[static_cast<size_t>(i)].attrs >> kAttrLengthBits);
  }
  // Node index of a key, or -1.
  int64_t find(int64_t key) const;
  // find() of keys[0, n) into out[0, n) (memory loads overlapped: much faster for many keys).
  void find_batch(const int64_t* keys, size_t n, int64_t* out) const;
  // Zero bytes kept after the last attrs string (readable, not part of any attrs).
  static constexpr size_t kAttrPadding = 16;

  const std::vector<std::string>& files() const { return files_; }
  const std::string& path() const { return path_; }
  // Rows dropped because their id repeated an earlier row's.
  int64_t duplicate_rows() const { return duplicate_rows_; }
  // Bytes held (keys, weights, attrs, index), for logs.
  int64_t memory_bytes() const;

  NodeTable() = default;  // use load()

 private:
  friend class SamplerTableLoader;
  std::string path_;
  std::vector<std::string> files_;
  size_t num_attrs_ = 0;
  std::vector<Record> records_;
  std::vector<float> weights_;
  std::string attr_bytes_;  // attrs of all nodes, then kAttrPadding zero bytes
  int64_t duplicate_rows_ = 0;
  // Open addressing: slot = node index + 1 (0 empty), capacity a power of two.
  std::vector<uint32_t> slots_;
  uint64_t mask_ = 0;
};

// A user -> item edge table in compressed rows: the edges of each source, in file order or
// sorted by weight (descending, ties in file order).
class EdgeTable {
 public:
  enum class Order { kFileOrder, kWeightDescending };

  static std::shared_ptr<const EdgeTable> load(const std::string& path, Order order,
                                               const SamplerTableOptions& options);

  int64_t num_edges() const { return static_cast<int64_t>(dst_.size()); }
  int64_t num_sources() const { return static_cast<int64_t>(src_keys_.size()); }
  // Edge positions [begin, end) of a source key (empty when it has no edges).
  struct Range {
    int64_t begin = 0;
    int64_t end = 0;
    int64_t size() const { return end - begin; }
  };
  Range edges_of(int64_t src_key) const;
  // edges_of() of src_keys[0, n) into out[0, n) with overlapped loads; `rows` is scratch.
  void ranges_of(const int64_t* src_keys, size_t n, Range* out, std::vector<int64_t>* rows) const;
  int64_t dst(int64_t edge) const { return dst_[static_cast<size_t>(edge)]; }
  const int64_t* dst_data() const { return dst_.data(); }
  float weight(int64_t edge) const { return weights_[static_cast<size_t>(edge)]; }
  const std::vector<int64_t>& dst_keys() const { return dst_; }
  // Source keys in order of first appearance (one per source row).
  const std::vector<int64_t>& src_keys() const { return src_keys_; }
  // Distinct destination keys in order of first appearance in the files (graphlearn's
  // GetAllDstIds, what negative_sampler_v2 draws from).
  const std::vector<int64_t>& distinct_dst() const { return distinct_dst_; }

  const std::vector<std::string>& files() const { return files_; }
  const std::string& path() const { return path_; }
  int64_t memory_bytes() const;

  EdgeTable() = default;  // use load()

 private:
  friend class SamplerTableLoader;
  std::string path_;
  std::vector<std::string> files_;
  std::vector<int64_t> src_keys_;     // per source row
  std::vector<int64_t> row_offsets_;  // num_sources()+1
  std::vector<int64_t> dst_;          // grouped by source
  std::vector<float> weights_;
  std::vector<int64_t> distinct_dst_;
  std::vector<uint32_t> slots_;  // src key -> source row + 1
  uint64_t mask_ = 0;
};

}  // namespace tzrec::data
