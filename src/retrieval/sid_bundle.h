// The SID bundle `tzrec resolve_sid_collisions` publishes (TorchEasyRec's tzrec/utils/sid/bundle.py;
// docs/tzrec-compatibility.md §3.5), no torch: one generation is the directory
// <root>/<generation>/ holding its artifacts — sid_to_items and delta_sid_to_items (Parquet) under
// the output path, item_to_sid and delta_item_to_sid (CSV or Parquet) under the item_to_sid root —
// and manifest.json, written last (its presence marks the generation complete). Here: the item ids
// of SID tables, the artifacts' locations, the manifest, and reading a published generation back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/record_batch.h"
#include "parquet/writer.h"

namespace tzrec::retrieval {

// Item ids as a table types them: integers (int32 / int64) or strings.
struct SidItemIds {
  enum class Type { kUnknown, kInt32, kInt64, kString };
  Type type = Type::kUnknown;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;

  int64_t size() const { return static_cast<int64_t>(type == Type::kString ? strings.size() : ints.size()); }
  // pyarrow's name of the type ("int32", "int64", "string"): the manifest's item_id_type.
  std::string type_name() const;
  // A byte key of item r, for lookups.
  std::string key(int64_t r) const;
  // Item r as text (messages).
  std::string text(int64_t r) const;
  // TorchEasyRec's stable_order_hash of item r (retrieval/sid_collision.h).
  uint64_t order_hash(int64_t r) const;
  // The physical type of an output column of these ids, and item r appended to one.
  parquet::PhysicalType physical_type() const;
  void append_to(parquet::ColumnBuilder& column, int64_t r) const;
};

// Appends the ids of column `field` of `batch` to `ids`: a typed int32 / int64 / string column, or
// CSV text typed as pyarrow's read_csv infers it (int64 when every cell is an integer). Throws
// DataError naming the row for a null id, and for a type other than the one `ids` already has or
// a column of another type.
void append_sid_item_ids(const data::RecordBatch& batch, const std::string& field, SidItemIds* ids);

// <root>/<generation>/<artifact>.
std::string sid_artifact_location(const std::string& root, const std::string& generation, const std::string& artifact);

struct SidArtifact {
  std::string name;       // sid_to_items, delta_sid_to_items, item_to_sid, delta_item_to_sid
  std::string save_type;  // parquet | csv
  int64_t rows = 0;
  std::string location;
};

struct SidManifest {
  std::string bundle_uuid;
  std::vector<int64_t> codebook;
  int64_t capacity = 0;
  int64_t max_observed_items_per_sid = 0;
  std::vector<SidArtifact> artifacts;  // in the order they were written
  std::string since_bundle_uuid;       // the generation appended onto ("" for a full resolve)
  std::string item_id_type;

  const SidArtifact* artifact(const std::string& name) const;
};

// <output_path>/<generation>/manifest.json: JSON with the keys in TorchEasyRec's order, empty
// optional keys left out.
void write_sid_manifest(const std::string& path, const SidManifest& manifest);
// Throws DataError when the file is missing (the generation did not finish) or is not a manifest
// this tool writes.
SidManifest read_sid_manifest(const std::string& path);

// A published sid_to_items: its rows (one SID each, ascending by bucket key), their codes and
// their item ids in slot order.
struct SidGroups {
  std::vector<int64_t> keys;
  std::vector<int64_t> codes;    // [G * layers]
  std::vector<int64_t> offsets{0};  // group g holds items[offsets[g], offsets[g + 1])
  SidItemIds items;
  int64_t size() const { return static_cast<int64_t>(keys.size()); }
};

// A published item_to_sid: one row per item.
struct SidItemRows {
  SidItemIds ids;
  std::vector<int64_t> origin_codes;  // [N * layers]
  std::vector<int64_t> codes;         // [N * layers]
  std::vector<int64_t> slots;         // index
};

// Reads the artifact at `pattern` (its part files). Throws DataError naming the file and row for
// a row that is not one this tool writes (codes of another width or outside the codebook, groups
// not ascending or repeated).
SidGroups read_sid_to_items(const std::string& pattern, const std::vector<int64_t>& codebook, int64_t batch_size);
SidItemRows read_item_to_sid(const std::string& pattern, const std::string& save_type,
                             const std::vector<int64_t>& codebook, int64_t batch_size);

}  // namespace tzrec::retrieval
