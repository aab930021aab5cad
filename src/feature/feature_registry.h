// The feature types, by config oneof name: every entry of feature_configs (and every sub-feature
// of a grouped sequence_feature) is built through here. A new feature type is a new file with its
// Feature subclass and one line in feature_registry.cc.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <google/protobuf/message.h>

#include "feature/data_groups.h"
#include "feature/feature.h"
#include "feature/fg_dag.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::feature {

// Every feature of a config, in config order (a grouped sequence's sub-features in place), stub_type
// features included (FeatureInfo::stub: not parsed into batches, but in fg.json and FG_DAG).
struct FeatureSet {
  FgMode fg_mode = FgMode::kNone;
  bool fg_dag = false;  // fg_mode FG_DAG
  std::string multival_sep = "\x03";
  std::vector<FeaturePtr> features;
  FgDag dag;  // FG_DAG: the producers and constants of feature: / const: inputs
  // Per feature: in data group __NEG__ (data_groups.h); FeatureInfo::neg of build_feature_infos.
  std::vector<bool> neg;
  // data_config.force_base_data_group: the sampled features are parsed over the negatives' rows
  // as above but join __BASE__ (FeatureParser pads the others; FeatureInfo::neg stays false).
  bool force_base_data_group = false;
  // A sampler drawing negatives for a grouped sequence's items (data_groups.h): that sequence.
  std::optional<CandidateSequence> candidate;
  bool has_neg() const { return std::find(neg.begin(), neg.end(), true) != neg.end(); }
};

// Builds and checks the features of `config`: names unique, shared tables (same embedding_name)
// of one size, FG_DAG inputs naming features without cycles (plan_fg_dag). Throws NotSupportedError for feature types and options this build does not have,
// ConfigError (naming the field path) for invalid settings.
FeatureSet build_features(const protos::EasyRecConfig& config);

// The feature of oneof member `type` ("id_feature", "sequence_raw_feature", ...) whose message is
// `msg`; `sequence` parses it as a sequence (grouped sub-features). NotSupportedError at `path`
// for a type this build does not have.
FeaturePtr make_feature(const std::string& type, const google::protobuf::Message& msg, const std::string& path,
                        const BuildContext& ctx, bool sequence);

}  // namespace tzrec::feature
