// kv_dot_product, sequence_kv_dot_product and the kv_dot_product sub-features of a grouped
// sequence_feature (docs/tzrec-compatibility.md §5.10, KvDotProduct): the dot product of two
// key-value lists, `query` and `document`, one number per row (per item of a sequence).
//
// Sparse iff boundaries is set (bucket ids, table len(boundaries) + 1, compared in float32: a value
// equal to a boundary goes to the upper bucket); dense otherwise, one float (TorchEasyRec's
// KvDotProduct is a RawFeature with value_dim 1).
//
// FG_NONE (the column named after the feature holds FG output): sparse as id_feature, dense as
// raw_feature.
// FG_NORMAL / FG_DAG (in a sequence the item-side input — or those in sequence_fields — is per
// item, multi_input.h): each input is a list of entries "key:value" — text split by `separator`,
// list<string> elements, or a map<string, number> column (its entries). An entry without ':' is the
// key with value 1, so two key lists give the size of their intersection; the value follows the
// last ':' and must be a number (DataError otherwise); empty entries are skipped; a key repeated in
// one input keeps its last value. The result is the sum over the query's keys of query value ×
// document value (keys missing from the document add nothing, so disjoint lists give 0). A row
// whose query or document has no entry takes default_value (a number; "" is 0, as TorchEasyRec's
// test). Then boundaries or the dense block. kv_delimiter (a float in the schema, so it cannot name a
// character) is refused when the config is loaded; normalizer is accepted without effect, as in
// TorchEasyRec, whose fg.json entry carries none (a warning says so).
#pragma once

#include <string>
#include <vector>

#include "feature/multi_input_feature.h"
#include "feature/feature_support.h"
#include "feature/lookup_values.h"
#include "feature/multi_input.h"
#include "tzrec/protos/feature.pb.h"

namespace tzrec::feature {

class KvDotProduct : public MultiInputFeature {
 public:
  KvDotProduct(const protos::KvDotProduct& c, const std::string& path, const std::string& type,
               const BuildContext& ctx, bool sequence);

  bool cross_negative_group() const override { return true; }

 protected:
  // TorchEasyRec's KvDotProduct._fg_json (docs/tzrec-compatibility.md §5.3).
  std::vector<nlohmann::ordered_json> fg_json_entries() const override;

 private:
  void parse_fg(const data::RecordBatch& batch, const ParseOutput& out) const override;

  protos::KvDotProduct config_;  // for fg_json_entries()
  // inputs_: [query, document]
  LookupValuesSpec values_;      // one number per row / item: default, boundaries or dense
  // FG_NONE
};

}  // namespace tzrec::feature
