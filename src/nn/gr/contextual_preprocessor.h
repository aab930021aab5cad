// TorchEasyRec's ContextualInterleavePreprocessor (configs contextual_preprocessor — interleaving
// off — and contextual_interleave_preprocessor): history and candidate embeddings through the
// content encoder ("_content_encoder") and "_content_embedding_mlp"; the actions of the history
// (and one learned action row per candidate) through "_action_encoder" and
// "_action_embedding_mlp".
//   no interleaving: item = content + action (content alone without an action encoder)
//   interleaving:    every history item becomes two items (content, action); in training every
//                    target too (num_targets doubles), otherwise a target keeps its content item
// Timestamps: the history's, then the candidates' ("candidate_timestamp"), repeated for
// interleaved pairs. Then the contextual items in front (input_preprocessor.h).
#pragma once

#include <memory>

#include "nn/gr/input_preprocessor.h"

namespace tzrec::nn::gr {

class ContextualPreprocessor : public InputPreprocessor {
 public:
  ContextualPreprocessor(const InputPreprocessorOptions& options, const InputPreprocessorDims& dims,
                         const std::string& config_path);
  PreprocessedSequences forward(const std::map<std::string, torch::Tensor>& grouped) override;
  bool interleave_targets() const override { return is_training() && enable_interleaving_; }

 private:
  bool enable_interleaving_;
  std::string uih_key_, action_key_, watchtime_key_, timestamp_key_;
  std::shared_ptr<ContentEncoder> content_encoder_;
  std::shared_ptr<ContextualizedMLP> content_mlp_, action_mlp_;
  ActionEncoder action_encoder_{nullptr};
};

}  // namespace tzrec::nn::gr
