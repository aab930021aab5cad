// Data groups (docs/tzrec-compatibility.md §6.5): with a negative sampler, the features that read
// one of its attr_fields describe items and form data group __NEG__ — parsed over the batch's rows
// followed by the sampled negatives' rows — while the others stay in __BASE__ (TorchEasyRec's
// create_features with neg_fields: a feature is negative when its inputs meet the attr_fields).
#pragma once

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

}  // namespace tzrec::feature
