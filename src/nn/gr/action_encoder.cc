#include "nn/gr/action_encoder.h"

#include "nn/gr/jagged.h"

namespace tzrec::nn::gr {

ActionEncoderImpl::ActionEncoderImpl(ActionEncoderOptions options) : options_(std::move(options)) {
  TORCH_CHECK(options_.watchtime_to_action_thresholds.size() == options_.watchtime_to_action_weights.size(),
              "ActionEncoder: watchtime thresholds and weights differ in length");
  std::vector<int64_t> combined = options_.action_weights;
  combined.insert(combined.end(), options_.watchtime_to_action_weights.begin(),
                  options_.watchtime_to_action_weights.end());
  num_action_types_ = static_cast<int64_t>(combined.size());
  combined_action_weights_ =
      register_buffer("_combined_action_weights", torch::tensor(combined, torch::kInt64).reshape({num_action_types_}));
  const int64_t dim = options_.action_embedding_dim;
  action_embedding_table_ = register_parameter(
      "_action_embedding_table", torch::empty({num_action_types_, dim}).normal_(0.0, options_.embedding_init_std));
  target_action_embedding_table_ =
      register_parameter("_target_action_embedding_table",
                         torch::empty({1, num_action_types_ * dim}).normal_(0.0, options_.embedding_init_std));
}

torch::Tensor ActionEncoderImpl::forward(const torch::Tensor& seq_actions, const torch::Tensor& seq_watchtimes,
                                         const torch::Tensor& uih_offsets, const torch::Tensor& target_offsets) {
  auto actions = seq_actions.to(torch::kInt64).reshape({-1});
  if (need_watchtime()) {
    TORCH_CHECK(seq_watchtimes.defined(), "ActionEncoder: watch times are needed");
    auto watch = seq_watchtimes.reshape({-1});
    for (size_t j = 0; j < options_.watchtime_to_action_thresholds.size(); ++j) {
      auto bit = (watch >= static_cast<double>(options_.watchtime_to_action_thresholds[j])).to(torch::kInt64) *
                 options_.watchtime_to_action_weights[j];
      actions = torch::bitwise_or(actions, bit);
    }
  }
  // [L, K] 0/1 → [L, K, 1] · [K, dim] → [L, K · dim]
  auto exploded = torch::bitwise_and(actions.unsqueeze(-1), combined_action_weights_.unsqueeze(0)).gt(0);
  auto uih = (exploded.unsqueeze(-1).to(action_embedding_table_.scalar_type()) * action_embedding_table_.unsqueeze(0))
                 .reshape({-1, output_dim()});
  const int64_t total_targets = target_offsets[-1].item<int64_t>();
  auto targets = target_action_embedding_table_.expand({total_targets, output_dim()});
  return concat_2d_jagged(uih, targets, uih_offsets, target_offsets);
}

}  // namespace tzrec::nn::gr
