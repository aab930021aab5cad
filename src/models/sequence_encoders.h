// The sequence encoders of DEEP feature groups (FeatureGroupConfig.sequence_encoders, config
// message SeqEncoderConfig; docs/tzrec-compatibility.md §5.9): one builder per encoder type of the
// seq_module oneof, each making the nn/ module TorchEasyRec's create_seq_encoder makes.
#pragma once

#include "embedding/sequence_encoder.h"
#include "tzrec/protos/model.pb.h"

namespace tzrec::models {

// The factory EmbeddingGroup calls for encoder `index` of DEEP group `group` of `model_config`
// (which must outlive the factory). ConfigError naming the encoder's path for an unset
// seq_module or bad options.
embedding::SequenceEncoderFactory sequence_encoder_factory(const protos::ModelConfig& model_config);

}  // namespace tzrec::models
