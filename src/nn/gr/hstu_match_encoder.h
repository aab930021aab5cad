// The user-side HSTU encoder of hstu_match (TorchEasyRec's HSTUMatchEncoder,
// tzrec/modules/gr/hstu_transducer.py): the HSTU pipeline (hstu_transducer.h) over the user
// interaction history alone — a uih_preprocessor, no candidates in the sequence — then
// "_output_postprocessor" over every item and each row's last item as the user embedding
// [B, D]. A row without items (an empty history and no contextual items) gets zeros. With
// `query_time_key` the time encoding is anchored on that grouped input (the request time, [B, 1])
// instead of each row's last timestamp.
#pragma once

#include <map>
#include <string>

#include <torch/torch.h>

#include "nn/gr/hstu_transducer.h"

namespace tzrec::nn::gr {

class HSTUMatchEncoderImpl : public HSTUPipelineImpl {
 public:
  // ConfigError at `config_path`.input_preprocessor for another preprocessor than
  // uih_preprocessor (the others put candidates into the sequence).
  HSTUMatchEncoderImpl(const HSTUOptions& options, InputPreprocessorDims dims, int64_t scaling_seqlen,
                       const std::string& config_path, std::string query_time_key);
  // grouped: the embedding group outputs (input_preprocessor.h) → [B, D]
  torch::Tensor forward(const std::map<std::string, torch::Tensor>& grouped);
};
TORCH_MODULE(HSTUMatchEncoder);

}  // namespace tzrec::nn::gr
