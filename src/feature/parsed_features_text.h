// Each row's parsed features as one line of text: the `__features__` column that `tzrec predict
// --debug_level 1` adds after the reserved columns (TorchEasyRec's DataParser.dump_parsed_inputs),
// for comparing what the model read with what an online feature-generation service computes.
//
// A row's line is "name:value" per feature, joined by " | ", in config order (grouped sequences'
// sub-features as "<sequence_name>__<feature>"); stub_type features are left out. Values as
// TorchEasyRec prints the parsed arrays (integers in decimal, float32 values as numpy's str(),
// base/python_float.h):
//   sparse                ids joined by ","; weighted features "id:weight" per id, the strings
//                         sorted, joined by ","
//   sparse sequence       per item its ids joined by ",", the items joined by the sequence_delim
//   dense                 the row's value_dim floats joined by ","
//   dense sequence        per item its value_dim floats joined by ",", the items joined by the
//                         sequence_delim
// A feature of data group __NEG__ is read from the batch's neg_* parts (in prediction they hold
// the batch's own rows). Throws std::logic_error when a feature is missing from the batch.
#pragma once

#include <vector>

#include "data/record_batch.h"
#include "feature/feature.h"
#include "sparse/batch.h"

namespace tzrec::feature {

inline constexpr char kParsedFeaturesColumn[] = "__features__";

// The column (named kParsedFeaturesColumn, batch.batch_size rows) for `batch`, parsed from
// `features` (FeatureParser::features()).
data::StringColumn parsed_features_column(const std::vector<FeaturePtr>& features, const sparse::Batch& batch);

}  // namespace tzrec::feature
