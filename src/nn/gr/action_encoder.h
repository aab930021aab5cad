// The action encoder of the generative models (TorchEasyRec's SimpleActionEncoder,
// tzrec/modules/gr/action_encoder.py; config GRSimpleActionEncoder).
//
// A history item's actions are a bitmask; K = |action_weights| + |watchtime thresholds| action
// types each have a bit (combined weights w_k) and a learned embedding e_k [action_embedding_dim].
// A history item's embedding is [ (a & w_k) > 0 ? e_k : 0 for k < K ] (K · dim floats), where a
// is the item's action bitmask, first OR-ed with watchtime_to_action_weights[j] whenever its
// watch time ≥ watchtime_to_action_thresholds[j]. Every candidate gets one learned embedding
// (_target_action_embedding_table [1, K · dim]). Output rows: per sequence, its history items then
// its candidates.
//
// State dict: "_combined_action_weights" (int64 buffer [K]), "_action_embedding_table" [K, dim],
// "_target_action_embedding_table" [1, K · dim]; both tables drawn from N(0, embedding_init_std²).
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

namespace tzrec::nn::gr {

struct ActionEncoderOptions {
  int64_t action_embedding_dim = 0;
  std::vector<int64_t> action_weights;
  std::vector<int64_t> watchtime_to_action_thresholds;
  std::vector<int64_t> watchtime_to_action_weights;  // same length as the thresholds
  double embedding_init_std = 0.1;
};

class ActionEncoderImpl : public torch::nn::Module {
 public:
  explicit ActionEncoderImpl(ActionEncoderOptions options);
  // seq_actions [Σ uih, 1] or [Σ uih] (any numeric dtype, read as int64 bitmasks); seq_watchtimes
  // the same shape (needed when need_watchtime()); uih_offsets / target_offsets [B + 1]
  // → [Σ uih + Σ targets, output_dim()] float.
  torch::Tensor forward(const torch::Tensor& seq_actions, const torch::Tensor& seq_watchtimes,
                        const torch::Tensor& uih_offsets, const torch::Tensor& target_offsets);
  int64_t output_dim() const { return num_action_types_ * options_.action_embedding_dim; }
  bool need_watchtime() const { return !options_.watchtime_to_action_thresholds.empty(); }

 private:
  ActionEncoderOptions options_;
  int64_t num_action_types_ = 0;
  torch::Tensor combined_action_weights_, action_embedding_table_, target_action_embedding_table_;
};
TORCH_MODULE(ActionEncoder);

}  // namespace tzrec::nn::gr
