// combo_feature, sequence_combo_feature and the combo_feature sub-features of a grouped
// sequence_feature (docs/tzrec-compatibility.md §5.10): the cartesian product of two
// or more inputs, one id per combination. Always sparse; the table: zch.zch_size > hash_bucket_size >
// len(effective vocab_list) > max(vocab_dict) + 1 (no num_buckets, as TorchEasyRec). With zch the
// ids are raw 64-bit ids (zch_settings.h): the texts hashed over [0, 2^63 - 1), FG_NONE ids any int64.
//
// FG_NONE (the column named after the feature holds FG output): as id_feature (ids split by
// fg_encoded_multival_sep, fg_encoded_default_value for empty cells).
// FG_NORMAL / FG_DAG (inputs: the expressions; in a sequence, the item-side inputs — or those in
// sequence_fields — are per item, multi_input.h):
//   each input's values split by `separator` (list columns: their elements; empty tokens are no
//   value); the combinations in order (the first input varies slowest), each the values' texts
//   (integers in decimal) joined by "_" — pyfg's combo output, TorchEasyRec's test vectors
//   "ua_ia" etc. — then zch / hash_bucket_size (hash of that text) or the vocabulary. An input without
//   values makes the whole row (item) default_value: one id of its text, or none when it is "".
//   value_dim n > 0 keeps the first n ids of a row (pyfg's value_dim truncation); 0 keeps all.
//   Sequences: one combination set per item (inputs that are not per item take part in every
//   item); an empty default is "0"; value_dim defaults to 1 (the item's first id; 0: all, > 1 is
//   an error as for id_feature); histories longer than sequence_length keep their first items.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "feature/bucketizer.h"
#include "feature/feature.h"
#include "feature/feature_support.h"
#include "feature/multi_input.h"
#include "tzrec/protos/feature.pb.h"

namespace tzrec::feature {

class ComboFeature : public Feature {
 public:
  ComboFeature(const protos::ComboFeature& c, const std::string& path, const std::string& type, const BuildContext& ctx,
               bool sequence);

  bool cross_negative_group() const override { return true; }

  std::vector<std::string> input_columns() const override;
  std::vector<SideInput> side_inputs() const override { return multi_side_inputs(fg_mode_, inputs_); }
  void parse(const data::RecordBatch& batch, const ParseOutput& out) const override;
  std::vector<FeatureAsset> assets() const override { return vocab_file_assets(config_); }

 protected:
  std::vector<nlohmann::ordered_json> fg_json_entries() const override;

 private:
  struct Scratch;
  // Pushes the ids of row r (item k) to out.sparse (at most `limit` when > 0); returns how many.
  int64_t push_ids(const MultiInputCells& cells, int64_t r, int64_t k, int64_t limit, const ParseOutput& out,
                   Scratch* s) const;
  void parse_fg(const data::RecordBatch& batch, const ParseOutput& out) const;

  protos::ComboFeature config_;  // for fg_json_entries()
  std::vector<FgInput> inputs_;
  Bucketizer bucketizer_;
  std::string default_value_;
  std::string sequence_delim_;
  int64_t value_dim_ = 0;  // ids kept per row (per item of a sequence); 0: all
  // FG_NONE
  std::optional<std::string> fg_encoded_default_;
  EncodedIds encoded_ids_;
};

}  // namespace tzrec::feature
