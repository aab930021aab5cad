// The FG_NONE default of a use_mask feature that sets no fg_encoded_default_value: what feature
// generation gives for empty inputs, as TorchEasyRec computes it (BaseFeature.
// fg_encoded_default_value runs the feature's FG on None inputs; docs/tzrec-compatibility.md
// §6.6). The masked rows, and every empty cell of the feature's column, then read this value.
#pragma once

#include <memory>
#include <string>

#include <google/protobuf/message.h>

#include "feature/feature.h"

namespace tzrec::feature {

// The output of `fg_feature` (built for FG_NORMAL) on one row whose inputs are all empty, written
// as an FG_NONE cell: its ids, or its values in shortest round-trip form, joined by `sep` ("" when
// the output is empty). A non-sequence feature; throws NotSupportedError for a weighted one.
std::string empty_input_fg_output(const Feature& fg_feature, HashKind hash_kind, const std::string& sep);

// A copy of the feature message `msg` with fg_encoded_default_value set to `value`.
std::unique_ptr<google::protobuf::Message> with_fg_encoded_default(const google::protobuf::Message& msg,
                                                                   const std::string& value);

}  // namespace tzrec::feature
