// match_feature, sequence_match_feature and the match_feature sub-features of a grouped
// sequence_feature (docs/tzrec-compatibility.md §5.10): the values a nested map
// holds under a primary key (pkey) and a secondary key (skey).
//
// Sparse iff a bucketizer is set (zch > hash_bucket_size > num_buckets > vocab_list > vocab_dict >
// boundaries; zch: raw ids, zch_settings.h; table size in the same order, with one row more than the effective vocab_list, as
// TorchEasyRec's MatchFeature); dense otherwise, one float per row (per item of a sequence).
//
// FG_NONE: as lookup_feature (the column named after the feature holds ids or a number).
// FG_NORMAL / FG_DAG (inputs: `nested_map`, `pkey`, `skey`; kv_map.h for the map's forms; in a
// sequence, the item-side inputs — or those in sequence_fields — are per item):
//   pkey and skey values split by `separator` (empty tokens are no key). pkey / skey "ALL" in the
//   config read no input and match every primary / secondary key of the map; so does an input
//   value "ALL" when either is configured "ALL" (pyfg's multihit mode). Each (pkey value, skey
//   value) pair hits the entry of the last outer entry with that primary key and, in it, the last
//   inner entry with that secondary key (a wildcard: every entry, in map order).
//   Discrete values (zch, hash_bucket_size, num_buckets, vocab bucketizers): each hit is one value,
//   "<pkey>_" with show_pkey, then "<skey>_" with show_skey, then the map value; the hashed text
//   (hash_bucket_size and zch) is prefixed with "<feature_name>_" (the config's feature_name:
//   pyfg's match_feature hashes its output with the feature name, TorchEasyRec's test vector
//   "match_feat_1" -> 71 of 100).
//   Numeric values (boundaries, dense): the hits are summed (need_discrete: each hit is a value),
//   then normalizer, then boundaries. No hit: default_value (lookup_values.h).
//   Sequences as lookup_feature.
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

class MatchFeature : public MultiInputFeature {
 public:
  MatchFeature(const protos::MatchFeature& c, const std::string& path, const std::string& type, const BuildContext& ctx,
               bool sequence);

  bool cross_negative_group() const override { return true; }

  std::vector<FeatureAsset> assets() const override { return vocab_file_assets(config_); }

 protected:
  std::vector<nlohmann::ordered_json> fg_json_entries() const override;

 private:
  struct Scratch;
  // The hits of row r (item k) into `values`.
  void collect(const MultiInputCells& cells, int64_t r, int64_t k, const std::vector<NestedEntry>& outer,
               HashKind hash_kind, LookupValues* values, Scratch* s) const;
  void parse_fg(const data::RecordBatch& batch, const ParseOutput& out) const override;

  protos::MatchFeature config_;  // for fg_json_entries()
  // inputs_: [nested_map, pkey (unless ALL), skey (unless ALL)]
  int pkey_input_ = -1;          // index into inputs_; -1: "ALL"
  int skey_input_ = -1;
  bool multihit_ = false;  // pkey or skey is "ALL": input values "ALL" are wildcards too
  bool show_pkey_ = false;
  bool show_skey_ = false;
  std::string hash_prefix_;  // "<feature_name>_" with hash_bucket_size or zch
  LookupValuesSpec values_;
  // FG_NONE
};

}  // namespace tzrec::feature
