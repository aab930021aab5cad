// Data groups (docs/tzrec-compatibility.md §6.5): with a negative sampler, the features that read
// one of its attr_fields describe items and form data group __NEG__ — parsed over the batch's rows
// followed by the sampled negatives' rows — while the others stay in __BASE__ (TorchEasyRec's
// create_features with neg_fields: a feature is negative when its inputs meet the attr_fields).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "feature/feature.h"
#include "tzrec/protos/data.pb.h"

namespace tzrec::feature {

// Per feature of `features`, whether it is in __NEG__ (all false without a sampler). Refused with
// NotSupportedError naming the feature: a feature reading both attr_fields and other inputs
// (TorchEasyRec's cross-negative group; FG_DAG `feature:` / `const:` inputs count as other
// inputs), a sequence feature over attr_fields. ConfigError (data_config.<sampler>.<field>) for a
// sampler config without its required fields.
std::vector<bool> negative_features(const protos::DataConfig& data_config, const std::vector<FeaturePtr>& features);

// A negative sampler whose item_id_field is the input column of a grouped sequence's sub-feature
// ("<sequence_name>__<input>": TorchEasyRec's candidate sequences, read by hstu_match): each row's
// items of that sequence are its positives, the sampler draws negatives for all of them, and
// the negatives are appended to the batch's last row of that sequence (feature/negative_rows.h)
// instead of forming data group __NEG__. attr_fields name the sub-features' inputs without the
// prefix ("video_id" for column "cand_seq__video_id"), as TorchEasyRec.
struct CandidateSequence {
  std::string name;    // sequence_name
  std::string delim;   // its sequence_delim
  std::string prefix;  // "<name>__"
  // The sub-features' input columns, each "<prefix><attr field>".
  std::vector<std::string> columns;

  // Whether `f` is one of the sequence's sub-features (parsed into batches: stubs are not).
  bool holds(const FeatureInfo& f) const { return !f.stub && f.sequence_name == name; }
};

// The candidate sequence of `data_config`'s sampler, or nullopt (no sampler, or a scalar
// item_id_field). ConfigError naming the feature for a sub-feature of that sequence reading a
// column the sampler does not provide (its input must be one of attr_fields).
std::optional<CandidateSequence> candidate_sequence(const protos::DataConfig& data_config,
                                                    const std::vector<FeaturePtr>& features);

}  // namespace tzrec::feature
