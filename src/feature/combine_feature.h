// combine_feature, sequence_combine_feature and the combine_feature sub-features of a grouped
// sequence_feature (docs/tzrec-compatibility.md §5.10, CombineFeature): the values of one input,
// mapped to numbers by `value_map` (or read as numbers) and combined into one number per row (per
// item of a sequence).
//
// Sparse iff num_buckets or boundaries is set (table num_buckets, else len(boundaries) + 1); dense
// otherwise, one float (TorchEasyRec's CombineFeature.value_dim is 1).
//
// FG_NONE (the column named after the feature holds FG output): sparse as id_feature (ids split by
// fg_encoded_multival_sep, fg_encoded_default_value for empty cells), dense as raw_feature.
// FG_NORMAL / FG_DAG (input: `expression`; in a sequence it is per item unless it is a `feature:`
// input or sequence_fields leaves it out, as TorchEasyRec's single-input features):
//   the input's values split by `separator` (list columns: their elements); empty tokens are no
//   value. With value_map, a value is its entry's number and values without an entry are no value;
//   without it, each value must be a number (DataError otherwise). The values are combined by
//   `combiner` (sum, mean / avg, min, max, count: the number of values; "" is a ConfigError,
//   gap_min / gap_max NotSupportedError). A row (item) without a value takes default_value: its
//   value_map entry, else the number it is ("" is 0; anything else is a ConfigError). Then the
//   normalizer, then num_buckets (the number truncated to an integer, which must be an id in
//   [0, num_buckets): DataError otherwise), boundaries (float32 compare, a value equal to a boundary
//   goes to the upper bucket), or the dense block.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "feature/bucketizer.h"
#include "feature/multi_input_feature.h"
#include "feature/feature_support.h"
#include "feature/lookup_values.h"
#include "feature/multi_input.h"
#include "tzrec/protos/feature.pb.h"

namespace tzrec::feature {

class CombineFeature : public MultiInputFeature {
 public:
  CombineFeature(const protos::CombineFeature& c, const std::string& path, const std::string& type,
                 const BuildContext& ctx, bool sequence);


 protected:
  // TorchEasyRec's CombineFeature._fg_json (docs/tzrec-compatibility.md §5.3).
  std::vector<nlohmann::ordered_json> fg_json_entries() const override;

 private:
  // The combined number of row r (item k), after the normalizer.
  double value_of(const MultiInputCells& cells, int64_t r, int64_t k, LookupValues* values, std::string* buf) const;
  // The id of number x of row r (sparse).
  int64_t id_of(double x, const MultiInputCells& cells, int64_t r, HashKind hash_kind) const;
  void parse_fg(const data::RecordBatch& batch, const ParseOutput& out) const override;

  protos::CombineFeature config_;  // for fg_json_entries()
  // inputs_: [expression]
  std::unordered_map<std::string, double> value_map_;
  Bucketizer bucketizer_;    // kNumBuckets, kBoundaries, or kNone (dense)
  LookupValuesSpec values_;  // combiner, default and normalizer (a dense number of width 1)
  // FG_NONE
};

}  // namespace tzrec::feature
