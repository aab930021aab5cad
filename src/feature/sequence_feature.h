// The grouped sequence_feature (docs/tzrec-compatibility.md §5.8): one history of items with
// several per-item sub-features, each a feature named "<sequence_name>__<feature_name>" that
// reads its FG input from column "<sequence_name>__<input>" (FG_NONE: the column named after the
// sub-feature; combo / lookup / match sub-features: only their per-item inputs, multi_input.h) and
// splits items by the group's sequence_delim. sequence_length is the group's
// maximum number of items (FG modes keep the first sequence_length); sequence_pk is a serving key
// with no effect offline.
#pragma once

#include <string>
#include <vector>

#include "feature/feature.h"
#include "tzrec/protos/feature.pb.h"

namespace tzrec::feature {

// Appends the sub-features of sequence_feature `c` (at `path`) to *out.
void expand_sequence_feature(const protos::SequenceFeature& c, const std::string& path, const BuildContext& ctx,
                             std::vector<FeaturePtr>* out);

}  // namespace tzrec::feature
