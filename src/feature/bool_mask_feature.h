// bool_mask_feature, sequence_bool_mask_feature and the bool_mask_feature sub-features of a grouped
// sequence_feature (docs/tzrec-compatibility.md §5.10, BoolMaskFeature): the values of one input
// kept where a second input, a list of booleans, is true (as tf.boolean_mask), then bucketized as
// an id_feature. Always sparse.
//
// Bucketizers (bucketizer.h): zch > hash_bucket_size > num_buckets > vocab_list > vocab_dict >
// vocab_file; one is required, and num_buckets with a vocabulary (and neither zch nor
// hash_bucket_size) is a ConfigError (TorchEasyRec would size the table by one and bucketize by the
// other). zch: raw ids (zch_settings.h).
// FG_NONE (the column named after the feature holds FG output): ids as an id_feature's column.
// FG_NORMAL / FG_DAG (inputs: `expression` = [values, mask]; in a sequence the item-side inputs —
// or those in sequence_fields — are per item, multi_input.h):
//   both inputs split by `separator` (list columns: their elements); the mask has one entry per
//   value (else DataError): true / false (any case), or a number (non-zero is true; bool and
//   number columns as they are); anything else is a DataError. The values at true positions are
//   kept (empty tokens give no id) and bucketized by their text (numbers in decimal). A row (item)
//   left without an id — its value input is empty, or the mask drops every value — takes
//   default_value (split by `separator`, unmasked; "" gives no id; "0" in sequences when empty).
//   value_dim: n > 0 keeps a row's first n ids, 0 (the default outside sequences) all; sequences:
//   1 (the default) keeps an item's first id, 0 all, > 1 is a ConfigError.
// TorchEasyRec's BoolMaskFeature.fg_json replaces the base rules: its entry keeps feature_type
// "bool_mask_feature" in stand-alone sequences too and ends with sequence_delim, sequence_length.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "feature/bucketizer.h"
#include "feature/multi_input_feature.h"
#include "feature/feature_support.h"
#include "feature/lookup_values.h"
#include "feature/multi_input.h"
#include "tzrec/protos/feature.pb.h"

namespace tzrec::feature {

class BoolMaskFeature : public MultiInputFeature {
 public:
  BoolMaskFeature(const protos::BoolMaskFeature& c, const std::string& path, const std::string& type,
                  const BuildContext& ctx, bool sequence);

  bool cross_negative_group() const override { return true; }

  std::vector<FeatureAsset> assets() const override { return vocab_file_assets(config_); }
  // TorchEasyRec's BoolMaskFeature.fg_json (docs/tzrec-compatibility.md §5.3).
  std::vector<nlohmann::ordered_json> fg_json() const override;

 private:
  struct Scratch;
  // The ids of row r (item k) into s->ids.
  void ids_of(const MultiInputCells& cells, int64_t r, int64_t k, HashKind hash_kind, Scratch* s) const;
  // The ids of the values in s->values that the mask of row r (item k) keeps, into s->ids.
  void mask_values(const MultiInputCells& cells, int64_t r, int64_t k, HashKind hash_kind, Scratch* s) const;
  void parse_fg(const data::RecordBatch& batch, const ParseOutput& out) const override;

  protos::BoolMaskFeature config_;  // for fg_json() and assets()
  // inputs_: [values, mask]
  Bucketizer bucketizer_;
  std::string default_value_;  // the effective default value
  std::string separator_;
  int64_t max_ids_ = 0;  // ids kept per row / item; 0: all
  // FG_NONE
};

}  // namespace tzrec::feature
