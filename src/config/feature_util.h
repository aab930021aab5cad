// Small accessors over the FeatureConfig oneof, shared by the whole engine.
#pragma once

#include <string>

#include "tzrec/protos/feature.pb.h"

namespace tzrec::config {

// feature_name of whichever oneof entry is set (sequence_name for a grouped
// sequence_feature); empty when none is set.
const std::string& feature_name(const protos::FeatureConfig& f);

// Name of the oneof field that is set, e.g. "id_feature"; empty when none is set.
std::string feature_type_name(const protos::FeatureConfig& f);

// The message of the oneof entry that is set (IdFeature, RawFeature, ...), or nullptr.
const google::protobuf::Message* feature_message(const protos::FeatureConfig& f);

// True for features that produce embedding-bag ids: id_feature, and raw_feature with
// boundaries. (Only the feature types of this build are classified.)
bool is_sparse_feature(const protos::FeatureConfig& f);

// embedding_dim of a sparse feature (0 when not set or not sparse).
uint32_t feature_embedding_dim(const protos::FeatureConfig& f);

// TorchEasyRec's RTP naming: env USE_RTP is "1" (tzrec/utils/env_util.py use_rtp()).
bool rtp_naming();

// What joins a grouped sequence's name to the names of its sub-features and of their input
// columns: "<sequence_name>__" ("click_seq__item_id"), or "<sequence_name>_" under RTP naming
// ("click_seq_item_id"), as TorchEasyRec's Feature.grouped_sequence_prefix. The one rule for
// feature names, column names, embedding names and gen_data's columns.
std::string grouped_sequence_prefix(const std::string& sequence_name);

// `name` inside the grouped sequence `sequence_name` (its prefix, then the name); `name` itself
// when `sequence_name` is empty (a feature outside any grouped sequence).
std::string grouped_sequence_name(const std::string& sequence_name, const std::string& name);

}  // namespace tzrec::config
