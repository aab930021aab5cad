// lookup_feature, sequence_lookup_feature and the lookup_feature sub-features of a grouped
// sequence_feature (docs/tzrec-compatibility.md §5.10): the values a map input
// holds for the values of a key input.
//
// Sparse iff a bucketizer is set (zch > hash_bucket_size > num_buckets > vocab_list > vocab_dict >
// boundaries, table size in the same order, bucketizer.h); dense otherwise, max(value_dim, 1)
// floats per row (per item of a sequence). zch: raw ids (zch_settings.h), the values hashed as
// text over [0, 2^63 - 1) and always discrete (TorchEasyRec's value_type "string").
//
// FG_NONE (the column named after the feature holds FG output): sparse as id_feature (ids split
// by fg_encoded_multival_sep, fg_encoded_default_value for empty cells); dense as raw_feature.
// FG_NORMAL / FG_DAG (inputs: `map` and `key`, kv_map.h for the map's forms; in a sequence, the
// item-side input — or those named in sequence_fields — is per item, multi_input.h):
//   key values split by `separator` (empty tokens are no key; value_dim > 1 always uses "\x1d",
//   as TorchEasyRec's fg.json of that form carries no separator); each key hits the map entry with
//   the same text (the last one when the map repeats a key); keys without an entry hit nothing.
//   Discrete values (zch, hash_bucket_size, num_buckets, vocab_list / vocab_dict bucketizers; also
//   need_discrete): each hit is one value, "<key>_<value>" with need_key. Numeric values
//   (boundaries, dense): combiner (sum, mean / avg, min, max, count; "" or need_discrete: each hit
//   is a value) then normalizer then boundaries. value_dim > 1: each hit is a vector of value_dim
//   numbers split by value_separator (dense, or value_dim bucket ids with boundaries). No hit,
//   no key or no map: default_value (lookup_values.h).
//   Sequences: one output per item; an empty default value is "0"; histories longer than
//   sequence_length keep their first items; sparse items keep their first id with value_dim 1
//   (the default) and all with value_dim 0.
// Refused (NotSupportedError): need_key or show_* style prefixes on numeric values, a normalizer on
// discrete values, combiner gap_min / gap_max, fg_value_type other than the derived one.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "feature/multi_input_feature.h"
#include "feature/feature_support.h"
#include "feature/kv_map.h"
#include "feature/lookup_values.h"
#include "feature/multi_input.h"
#include "feature/raw_feature.h"
#include "tzrec/protos/feature.pb.h"

namespace tzrec::feature {

class LookupFeature : public MultiInputFeature {
 public:
  LookupFeature(const protos::LookupFeature& c, const std::string& path, const std::string& type,
                const BuildContext& ctx, bool sequence);

  bool cross_negative_group() const override { return true; }

  std::vector<FeatureAsset> assets() const override { return vocab_file_assets(config_); }

 protected:
  std::vector<nlohmann::ordered_json> fg_json_entries() const override;

 private:
  // The hits of row r (item k) into `values`.
  void collect(const MultiInputCells& cells, int64_t r, int64_t k, const std::vector<KvEntry>& entries,
               HashKind hash_kind, LookupValues* values, std::string* buf_a, std::string* buf_b) const;
  void parse_fg(const data::RecordBatch& batch, const ParseOutput& out) const override;

  protos::LookupFeature config_;  // for fg_json_entries()
  // inputs_: [map, key]
  LookupValuesSpec values_;
  bool need_key_ = false;
  // FG_NONE
};

}  // namespace tzrec::feature
