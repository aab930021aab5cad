// One column of the data `tzrec gen_data --pipeline_config_path` writes: what a value is drawn
// from (Domain), how the values of a cell are laid out (Layout), and which config fields read
// the column (sources, as field paths for messages).
//
// Physical Parquet types (column_physical_type):
//   sequence columns and the text layouts (kJoined, kWeighted, kLookupMap, kNestedMap) -> STRING
//   kScalar / kList: kIds, kFlag -> INT64; kFloat -> FLOAT; kVocab, kWords -> STRING
//   (kList as LIST<T>).
// Two features may read one column (e.g. an id_feature and the key of a lookup_feature):
// merge_column() combines their specs into one that satisfies both, or throws ConfigError
// naming both readers when no value can (e.g. a lookup map read as ids).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parquet/writer.h"

namespace tzrec::datagen {

struct Domain {
  enum class Kind { kIds, kVocab, kFloat, kWords, kFlag };
  Kind kind = Kind::kIds;
  // kIds: integer ids in [0, size), Zipf-distributed (small ids are frequent). kWords: a
  // lexicon of `size` words "w0", "w1", ...
  int64_t size = 0;
  // kIds only: the reader hashes whatever it gets (hash_bucket_size), so `size` is a choice of
  // cardinality, not a limit; any other domain may replace it when columns are merged.
  bool any_token = false;
  std::vector<std::string> vocab;  // kVocab: Zipf over the entries
  // kFloat: uniform in [lo, hi), or log-normal exp(N(lo, hi)) when log_normal (positive values).
  double lo = 0.0;
  double hi = 1.0;
  bool log_normal = false;

  static Domain ids(int64_t size, bool any_token = false);
  static Domain vocabulary(std::vector<std::string> entries);
  static Domain floats(double lo, double hi);
  static Domain positive_floats(double mu, double sigma);  // log-normal
  static Domain words(int64_t size);
  static Domain flag();
};

enum class Layout {
  kScalar,     // one value
  kList,       // LIST<T> of min_values..max_values values
  kJoined,     // STRING: min_values..max_values values joined by `delim`
  kWeighted,   // STRING: "value:weight" pairs joined by `delim` (weights in (0.1, 2))
  kLookupMap,  // STRING: "key:value" pairs joined by `delim`; keys from domain, values from value_domain
  kNestedMap,  // STRING: "pk^sk:v,sk:v|pk^sk:v"; keys from domain, values from value_domain
};

enum class Role { kInput, kLabel, kSampleWeight, kCost };

enum class LabelKind { kBinary, kClass, kFloat };

// Items gen_data writes at most per row of a sequence whose feature sets no sequence_length (the
// engine then keeps every item): TorchEasyRec's mock data writes 10 (tzrec/tests/utils.py,
// `sequence_length or 10`).
inline constexpr int kUnsetSequenceItems = 10;

struct ColumnSpec {
  std::string name;
  Role role = Role::kInput;
  Domain domain;
  Layout layout = Layout::kScalar;
  int min_values = 1;  // values per cell (per sequence element for sequences)
  int max_values = 1;
  std::string delim;   // kJoined / kWeighted / kLookupMap
  Domain value_domain; // kLookupMap / kNestedMap
  int map_value_count = 1;            // kLookupMap: values per entry (a lookup's value_dim)
  std::string map_value_delim = ",";  // kLookupMap: joins them (a lookup's value_separator)
  // Sequence: the cell is 1..sequence_items(spec) elements joined by sequence_delim, each laid out
  // as above (kScalar or kJoined); all columns of one sequence_group have the same element count
  // in a row (a grouped sequence_feature, or the sequence inputs of one sequence_* feature).
  bool sequence = false;
  std::string sequence_group;
  int sequence_length = 0;  // the feature's sequence_length; 0 where the config sets none
  std::string sequence_delim;
  // kList columns with the same non-empty length_group have the same length in a row
  // (bool_mask_feature values and mask).
  std::string length_group;
  // Role kLabel.
  LabelKind label_kind = LabelKind::kBinary;
  int num_class = 2;
  // Set by the plan: the values of this column are attributes of the sampled item (or the item
  // or user id), drawn per entity so that the sampler tables agree with the rows.
  bool item_attr = false;
  bool item_id = false;
  bool user_id = false;
  std::vector<std::string> sources;
  // The features that read the column, by the names feature groups use: feature_name, or
  // {sequence_name}__{feature_name} for a feature of a grouped sequence_feature.
  std::vector<std::string> features;
};

// The most items a row of the sequence column `spec` gets: its sequence_length, or
// kUnsetSequenceItems where the config sets none.
inline int sequence_items(const ColumnSpec& spec) {
  return spec.sequence_length > 0 ? spec.sequence_length : kUnsetSequenceItems;
}

// "ids in [0, 100)", "lookup map", ... for messages.
std::string describe(const ColumnSpec& spec);

// The Parquet field written for `spec` (REQUIRED values, non-null list elements).
parquet::WriterField column_field(const ColumnSpec& spec);

// Combines `add` into `have` (same column name). Throws ConfigError naming both sources when
// no value can satisfy both readers.
void merge_column(ColumnSpec* have, const ColumnSpec& add);

}  // namespace tzrec::datagen
