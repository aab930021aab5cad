// The input preprocessors of the generative models (TorchEasyRec's tzrec/modules/gr/preprocessors.py;
// config GRInputPreprocessor): turn the embedding groups of a batch into the one jagged sequence
// per row that the STU layers read.
//
// Grouped inputs (embedding/sequence_embedding_group.h, JAGGED_SEQUENCE groups), with the channel
// prefix p = name or "uih":
//   "<p>.sequence" [Σ uih, Du], "<p>.sequence_length" [B]   the user interaction history (UIH)
//   "<p>_action.sequence", "<p>_watchtime.sequence", "<p>_timestamp.sequence"  [Σ uih, 1]
//   "candidate.sequence" [Σ targets, Dt], "candidate.sequence_length" [B] (the targets per row),
//   "candidate_timestamp.sequence" [Σ targets, 1]            (contextual preprocessors only)
//   contextual_group [B, C · Dc]                              (when max_contextual_seq_len C > 0)
// The C contextual features are projected per position (`_batched_contextual_linear_weights`
// [C, Dc, D] ~ N(0, 2 / (Dc + D)), `_batched_contextual_linear_bias` [C, 1, D] zeros) and put in
// front of every row's sequence, with timestamp 0.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <torch/torch.h>

#include "nn/gr/action_encoder.h"
#include "nn/gr/content_encoder.h"
#include "nn/gr/contextualized_mlp.h"

namespace tzrec::nn::gr {

// One jagged sequence per row: contextual items, history items, then target items.
struct PreprocessedSequences {
  int64_t max_seq_len = 0;    // a bound on the row lengths, as TorchEasyRec computes it (see the preprocessors)
  int64_t total_uih_len = 0;  // Σ over rows of the items before the targets (contextual included)
  int64_t total_targets = 0;  // Σ num_targets
  torch::Tensor seq_lengths;     // [B] int64
  torch::Tensor seq_offsets;     // [B + 1] int64
  torch::Tensor seq_timestamps;  // [L]
  torch::Tensor seq_embeddings;  // [L, D]
  torch::Tensor num_targets;     // [B] int64: each row's last num_targets items are its targets
};

class InputPreprocessor : public torch::nn::Module {
 public:
  virtual PreprocessedSequences forward(const std::map<std::string, torch::Tensor>& grouped) = 0;
  // Whether targets are interleaved with their action items (then each target is 2 items).
  virtual bool interleave_targets() const { return false; }
  int64_t contextual_seq_len() const { return max_contextual_seq_len_; }

 protected:
  // Registers the contextual projection when C > 0.
  void init_contextual(int64_t contextual_feature_dim, int64_t max_contextual_seq_len, int64_t output_dim,
                       std::string contextual_group);
  // The contextual inputs [B, C · Dc] (undefined when C = 0) and their projection [B, C, D].
  torch::Tensor contextual_input(const std::map<std::string, torch::Tensor>& grouped) const;
  torch::Tensor project_contextual(const torch::Tensor& contextual_input) const;
  // Puts the C projected contextual items (timestamp 0) in front of every row of *s.
  void prepend_contextual(const torch::Tensor& contextual, PreprocessedSequences* s) const;
  // grouped[key], or a ConfigError-free programmer error naming the missing key.
  static const torch::Tensor& input(const std::map<std::string, torch::Tensor>& grouped, const std::string& key);

  int64_t max_contextual_seq_len_ = 0;
  int64_t contextual_feature_dim_ = 0;
  int64_t output_dim_ = 0;
  std::string contextual_group_;
  torch::Tensor contextual_weights_, contextual_bias_;
};

struct InputPreprocessorOptions {
  // "contextual_preprocessor" | "contextual_interleave_preprocessor" | "uih_preprocessor"
  std::string type;
  bool has_action_encoder = false;
  ActionEncoderOptions action_encoder;
  bool has_action_mlp = false;
  ContextualizedMLPOptions action_mlp;
  ContentEncoderOptions content_encoder;  // contextual preprocessors
  ContextualizedMLPOptions content_mlp;   // contextual preprocessors
  bool enable_interleaving = true;        // contextual_interleave_preprocessor
};

struct InputPreprocessorDims {
  int64_t uih_embedding_dim = 0;       // Du
  int64_t target_embedding_dim = 0;    // Dt (0 for uih_preprocessor)
  int64_t contextual_feature_dim = 0;  // Dc
  int64_t max_contextual_seq_len = 0;  // C
  std::string contextual_group = "contextual";
  int64_t output_embedding_dim = 0;  // D, the STU width
  std::string name;                  // channel prefix; "" = "uih"
};

// ConfigError naming config_path (the GRInputPreprocessor message) for an unset type, an action
// encoder without action_mlp, interleaving without an action encoder.
std::shared_ptr<InputPreprocessor> make_input_preprocessor(const InputPreprocessorOptions& options,
                                                           const InputPreprocessorDims& dims,
                                                           const std::string& config_path);

}  // namespace tzrec::nn::gr
