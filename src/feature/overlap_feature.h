// overlap_feature, sequence_overlap_feature and the overlap_feature sub-features of a grouped
// sequence_feature (docs/tzrec-compatibility.md §5.10, OverlapFeature): how much the terms of a
// query input and a title input overlap, one number per row (per item of a sequence).
//
// Sparse iff boundaries is set (bucket ids, table len(boundaries) + 1, compared in float32: a value
// equal to a boundary goes to the upper bucket); dense otherwise, one float (TorchEasyRec's
// OverlapFeature is a RawFeature with value_dim 1).
//
// FG_NONE (the column named after the feature holds FG output): sparse as id_feature (bucket ids
// split by fg_encoded_multival_sep, fg_encoded_default_value for empty cells), dense as
// raw_feature.
// FG_NORMAL / FG_DAG (inputs: `query` and `title`; in a sequence the item-side input — or those in
// sequence_fields — is per item, multi_input.h):
//   terms are the input's values split by `separator` (list columns: their elements, numbers as
//   their decimal text); empty tokens are no term. `method`:
//     query_common_ratio   query terms found in the title / query terms      in [0, 1]
//     title_common_ratio   title terms found in the query / title terms      in [0, 1]
//     is_contain           1 when the query's terms appear in the title as one run, in order
//     is_equal             1 when the two term lists are the same
//     index_of             the title position (in terms, from 0) where the query's terms first
//                          appear as one run, in order; -1 when they do not
//   (repeated terms count each time). An empty query or title gives 0 (every method). Then the
//   normalizer, then boundaries or the dense block. pyfg's proximity_* methods are
//   NotSupportedError; any other method is a ConfigError.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "feature/multi_input_feature.h"
#include "feature/feature_support.h"
#include "feature/lookup_values.h"
#include "feature/multi_input.h"
#include "tzrec/protos/feature.pb.h"

namespace tzrec::feature {

class OverlapFeature : public MultiInputFeature {
 public:
  OverlapFeature(const protos::OverlapFeature& c, const std::string& path, const std::string& type,
                 const BuildContext& ctx, bool sequence);

  bool cross_negative_group() const override { return true; }

  enum class Method { kQueryCommonRatio, kTitleCommonRatio, kIsContain, kIsEqual, kIndexOf };
  // The overlap of `query` and `title` terms by `method` (0 when either is empty).
  static double overlap(Method method, const std::vector<std::string_view>& query,
                        const std::vector<std::string_view>& title);

 protected:
  // TorchEasyRec's OverlapFeature._fg_json (docs/tzrec-compatibility.md §5.3).
  std::vector<nlohmann::ordered_json> fg_json_entries() const override;

 private:
  void parse_fg(const data::RecordBatch& batch, const ParseOutput& out) const override;

  protos::OverlapFeature config_;  // for fg_json_entries()
  // inputs_: [query, title]
  Method method_ = Method::kQueryCommonRatio;
  LookupValuesSpec values_;  // one number per row / item: normalizer, boundaries or dense
  // FG_NONE
};

}  // namespace tzrec::feature
