// custom_feature, sequence_custom_feature and the custom_feature sub-features of a grouped
// sequence_feature (docs/tzrec-compatibility.md §5.10, docs/custom_operators.md): values computed
// by an operator loaded from operator_lib_file (custom_operator.h).
//
// Sparse iff a bucketizer is set (zch > hash_bucket_size > num_buckets > vocab_list > vocab_dict >
// vocab_file > boundaries, table size in the same order, as TorchEasyRec's CustomFeature; zch: raw
// ids, zch_settings.h); dense
// otherwise, value_dim floats per row (per item of a sequence; value_dim defaults to 1).
//
// FG_NONE: as lookup_feature (the column named after the feature holds ids or numbers).
// FG_NORMAL / FG_DAG (inputs: the `expression` entries; in a sequence the item-side inputs — or
// those in sequence_fields — are per item): the operator gets each input's values (text split by
// `separator`) and adds the row's values. Text bucketizers look each value up as text; numeric
// outputs (boundaries, dense) take each value as a number (a text that is not one is a DataError),
// then normalizer, then boundaries. An operator that adds nothing gives default_value; an
// operator error is a DataError naming file, row and feature.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "feature/custom_operator.h"
#include "feature/multi_input_feature.h"
#include "feature/feature_support.h"
#include "feature/lookup_values.h"
#include "feature/multi_input.h"
#include "feature/raw_feature.h"
#include "tzrec/protos/feature.pb.h"

namespace tzrec::feature {

class CustomFeature : public MultiInputFeature {
 public:
  CustomFeature(const protos::CustomFeature& c, const std::string& path, const std::string& type,
                const BuildContext& ctx, bool sequence);

  bool cross_negative_group() const override { return true; }

  std::vector<FeatureAsset> assets() const override;
  std::vector<nlohmann::ordered_json> fg_json() const override;

 private:
  void parse_fg(const data::RecordBatch& batch, const ParseOutput& out) const override;

  protos::CustomFeature config_;  // for fg_json_entries() and assets()
  std::string operator_lib_file_;  // as configured, joined to asset_dir (official names as they are)
  std::shared_ptr<const CustomOperator> operator_;  // FG modes
  LookupValuesSpec values_;
  // FG_NONE
};

}  // namespace tzrec::feature
