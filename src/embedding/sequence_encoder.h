// Sequence encoders attached to a DEEP feature group (TorchEasyRec's FeatureGroupConfig
// sequence_groups / sequence_encoders, docs/tzrec-compatibility.md §5.9): each reads one nested
// sequence group's "<input>.query", "<input>.sequence", "<input>.sequence_length" and gives
// [B, output_dim], appended to the DEEP group's tensor.
//
// The encoders themselves are dense modules of a higher layer (nn/); the embedding group holds
// them through this type-erased handle, built by a factory the model layer passes in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <torch/torch.h>

namespace tzrec::embedding {

struct SequenceEncoderHandle {
  std::shared_ptr<torch::nn::Module> module;  // registered as "_group_name_to_seq_encoders.<group>.<i>"
  std::function<torch::Tensor(const std::map<std::string, torch::Tensor>&)> forward;
  int64_t output_dim = 0;
};

// What the factory is told about encoder `index` of a group: the config path of its
// SeqEncoderConfig ("model_config.feature_groups[0].sequence_encoders[1]"), the sequence group it
// reads (resolved: a group with one sequence group defaults to it) and that group's widths.
struct SequenceEncoderRequest {
  std::string group;  // the DEEP group
  size_t index = 0;   // the encoder's index in the group's sequence_encoders
  std::string path;
  std::string input;
  int64_t query_dim = 0;     // width of "<input>.query" (0 without query features)
  int64_t sequence_dim = 0;  // width of "<input>.sequence"
};

using SequenceEncoderFactory = std::function<SequenceEncoderHandle(const SequenceEncoderRequest&)>;

}  // namespace tzrec::embedding
