// One configured feature behind one interface: each feature type (id_feature.h, raw_feature.h,
// sequence_feature.h, ...) builds its compiled form from its config message and parses its input
// column(s) of a data::RecordBatch into the batch being assembled (feature_parser.h).
//
// Parsed outputs (sparse::Batch):
//   sparse                 ids into the KJT: values, lengths per row (+ weights when weighted)
//   dense                  value_dim floats per row into the dense block
//   sparse sequence        ids into the KJT with lengths = items per row (one id per item) or ids
//                          per row (multi-value items, value_dim 0: ids per item kept apart);
//                          items per row in Batch::sequence_lengths
//   dense sequence         [ΣL, value_dim] floats in Batch::sequence_dense_features, items per row
//                          in Batch::sequence_lengths
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "data/record_batch.h"
#include "feature/feature_info.h"
#include "feature/hash.h"

namespace tzrec::feature {

// FG_NONE, FG_NORMAL and FG_DAG (kNormal; BuildContext::fg_dag), FG_BUCKETIZE.
enum class FgMode { kNone, kNormal, kBucketize };

// FG_NONE and FG_BUCKETIZE read each feature's own column (named after the feature) holding
// feature-generation output: FG_NONE after bucketization, FG_BUCKETIZE before it (the feature's
// bucketizer then runs on each value; docs/tzrec-compatibility.md §5.2).
inline bool reads_encoded_column(FgMode mode) { return mode == FgMode::kNone || mode == FgMode::kBucketize; }

// Settings every feature of a config shares, and where a feature's config sits.
struct BuildContext {
  FgMode fg_mode = FgMode::kNone;
  bool fg_dag = false;  // FG_DAG: `feature:` / `const:` inputs are other features' outputs / constants (fg_dag.h)
  std::string multival_sep = "\x03";  // data_config.fg_encoded_multival_sep
  int config_index = 0;               // position in feature_configs
  bool stub_type = false;             // the feature's stub_type (set by make_feature)
  bool use_mask = false;              // FeatureInfo::use_mask (set by make_feature)
  // Grouped sequences (sequence_feature.features[j]): the group's settings; empty name otherwise.
  std::string sequence_name;
  std::string sequence_delim;
  int64_t sequence_length = 0;
};

// Key-major accumulation of the KJT: features append one after the other.
struct SparseOut {
  std::vector<int64_t> values;   // [sum(L)]
  std::vector<int64_t> lengths;  // [F * B]
  std::vector<float> weights;    // [sum(L)] when any feature is weighted
  // push() appends weights: set by the parser for weighted features (it fills the weights of the
  // others, all 1).
  bool with_weights = false;

  void push(int64_t id, float w) {
    values.push_back(id);
    if (with_weights) weights.push_back(w);
  }
};

// Where a feature writes what it parses from one record batch of `rows` rows.
struct ParseOutput {
  int64_t rows = 0;
  HashKind hash_kind = HashKind::kStdHash;
  SparseOut* sparse = nullptr;  // sparse and sparse-sequence features append here
  // Dense features: the [rows, dense_stride] float32 block; this feature's columns start at
  // dense_offset.
  float* dense = nullptr;
  int64_t dense_stride = 0;
  int64_t dense_offset = 0;
  // Sequence features: items per row [rows]; multi-value sparse items: ids per item [ΣL]; dense
  // sequences: [ΣL * value_dim] floats.
  std::vector<int64_t>* sequence_lengths = nullptr;
  std::vector<int64_t>* item_lengths = nullptr;
  std::vector<float>* sequence_dense = nullptr;
};

// A file a feature reads, as TorchEasyRec's BaseFeature.assets(): `field` names the config field
// (in the feature's message; dotted for a nested message) and `path` is the file as read.
struct FeatureAsset {
  std::string field;
  std::string path;
};

// One FG input of a feature, as TorchEasyRec's BaseFeature.side_inputs: its side (user, item,
// context, feature or const) and the column it is read from (grouped sequences' per-item inputs
// with the "<sequence_name>__" prefix).
struct SideInput {
  std::string side;
  std::string column;
};

class Feature {
 public:
  virtual ~Feature() = default;

  const FeatureInfo& info() const { return info_; }
  // "feature_configs[3].id_feature", "feature_configs[2].sequence_feature.features[1].id_feature"
  const std::string& field_path() const { return field_path_; }
  // The columns parse() reads.
  virtual std::vector<std::string> input_columns() const = 0;
  // FG_NORMAL / FG_DAG: the feature's FG inputs in config order; FG_NONE / FG_BUCKETIZE, where the
  // feature reads its own column: none.
  virtual std::vector<SideInput> side_inputs() const = 0;
  // Parses the feature's column(s) of `batch` into `out` (see the layout above). Throws DataError
  // naming file, row, column and feature.
  virtual void parse(const data::RecordBatch& batch, const ParseOutput& out) const = 0;
  // The entries this feature contributes to fg.json (docs/tzrec-compatibility.md §5.3), as
  // TorchEasyRec's BaseFeature.fg_json(): the type's fg_json_entries(), then for sequences an empty
  // or missing default_value becomes "0", and a sequence_* feature's entries get sequence_delim and
  // sequence_length and the "sequence_" prefix on feature_type. A grouped sub-feature's entries go
  // into its sequence's entry (feature/fg_json.h). NotSupportedError for a type without entries.
  // A type whose TorchEasyRec class replaces fg_json() itself (custom_feature) overrides this.
  virtual std::vector<nlohmann::ordered_json> fg_json() const;
  // The files the feature reads (vocab files, ...), copied into export packages and next to
  // fg.json (feature/assets.h). None by default.
  virtual std::vector<FeatureAsset> assets() const { return {}; }
  // Whether TorchEasyRec puts the feature, when it reads a negative sampler's attr_fields, in the
  // cross-negative data group __CNEG__ rather than __NEG__: the types whose is_neg setter says so
  // (combo, lookup, match, expr, overlap, kv_dot_product, bool_mask, custom; tzrec/features/).
  virtual bool cross_negative_group() const { return false; }

 protected:
  // Sets what every feature has from its config: path, FG settings, name (grouped sequences prefix
  // "<sequence_name>__") and type. ConfigError when feature_name is empty.
  Feature(const std::string& feature_name, const std::string& path, const std::string& type, const BuildContext& ctx);

  // The type's own fg.json entries, in TorchEasyRec's key order (each type's _fg_json()). The
  // default throws NotSupportedError "create_fg_json for <type>".
  virtual std::vector<nlohmann::ordered_json> fg_json_entries() const;

  FeatureInfo info_;
  std::string field_path_;
  FgMode fg_mode_ = FgMode::kNone;
  std::string multival_sep_;
};

using FeaturePtr = std::unique_ptr<const Feature>;

}  // namespace tzrec::feature
