// TorchEasyRec's UIHPreprocessor (config uih_preprocessor): the user interaction history alone,
// for two-tower retrieval (no candidates in the sequence, num_targets all 0). History embeddings
// through "_input_projection" (Linear(Du, D), torch's default init), plus with an action encoder
// "_action_embedding_mlp"("_action_encoder"(actions)); the history's timestamps; then the
// contextual items in front (input_preprocessor.h).
#pragma once

#include <memory>

#include "nn/gr/input_preprocessor.h"

namespace tzrec::nn::gr {

class UIHPreprocessor : public InputPreprocessor {
 public:
  UIHPreprocessor(const InputPreprocessorOptions& options, const InputPreprocessorDims& dims,
                  const std::string& config_path);
  PreprocessedSequences forward(const std::map<std::string, torch::Tensor>& grouped) override;

 private:
  std::string uih_key_, action_key_, watchtime_key_, timestamp_key_;
  torch::nn::Linear input_projection_{nullptr};
  std::shared_ptr<ContextualizedMLP> action_mlp_;
  ActionEncoder action_encoder_{nullptr};
};

}  // namespace tzrec::nn::gr
