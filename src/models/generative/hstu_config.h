// The HSTU config (protos::HSTU and its GR messages, docs/tzrec-compatibility.md §4.1) as the plain
// options of nn/gr/, with the defaults TorchEasyRec applies.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "embedding/embedding_group.h"
#include "nn/gr/hstu_transducer.h"
#include "tzrec/protos/module.pb.h"

namespace tzrec::models {

// config_path: where `hstu` sits ("model_config.dlrm_hstu.hstu"), for errors. ConfigError for
// required settings that are missing (a oneof left unset, STU widths of 0).
nn::gr::HSTUOptions to_hstu_options(const protos::HSTU& hstu, const std::string& config_path);

// Every grouped input reversed along its rows (TorchEasyRec's fx_flip_tensor_dict: the HSTU models
// with sequence_timestamp_is_ascending false read descending histories this way).
std::map<std::string, torch::Tensor> flip_grouped_rows(const std::map<std::string, torch::Tensor>& grouped);

// The contextual items of the HSTU input preprocessors (TorchEasyRec's DlrmHSTU and
// HSTUUserTower): a DEEP feature group "contextual" is C items, one per feature, of the dim they
// all share (with `concat`: one item of their total dim); the query features of a SEQUENCE group
// "contextual" are one item ("contextual.query"). Sets dims->contextual_group /
// contextual_feature_dim / max_contextual_seq_len and returns true; false when `group` has no
// "contextual". ConfigError at group_path("contextual") for features of different dims without
// `concat` (`concat_hint`: how to set it, or "" when the model has no such option).
bool set_contextual_dims(const embedding::EmbeddingGroupImpl& group, bool concat,
                         const std::function<std::string(const std::string&)>& group_path,
                         const std::string& concat_hint, nn::gr::InputPreprocessorDims* dims);

}  // namespace tzrec::models
