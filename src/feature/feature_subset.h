// The part of a config that computes some of its features: what a tower of a match model needs to
// run on its own (export/exporter.cc writes it into the tower's package, whose predict input then
// needs only those features' columns).
#pragma once

#include <set>
#include <string>

#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::feature {

// `config` with only the feature_configs entries that produce a feature of `names` (a grouped
// sequence_feature by any of its sub-features), plus under FG_DAG, recursively, those whose
// outputs they read as `feature:` inputs. Entries keep their order. ConfigError (from building
// the features) as build_features().
protos::EasyRecConfig keep_features(const protos::EasyRecConfig& config, const std::set<std::string>& names);

}  // namespace tzrec::feature
