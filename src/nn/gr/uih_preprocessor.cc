#include "nn/gr/uih_preprocessor.h"

#include "nn/gr/jagged.h"

namespace tzrec::nn::gr {

UIHPreprocessor::UIHPreprocessor(const InputPreprocessorOptions& options, const InputPreprocessorDims& dims,
                                 const std::string& config_path) {
  const std::string prefix = dims.name.empty() ? std::string("uih") : dims.name;
  uih_key_ = prefix;
  action_key_ = prefix + "_action";
  watchtime_key_ = prefix + "_watchtime";
  timestamp_key_ = prefix + "_timestamp";
  input_projection_ =
      register_module("_input_projection", torch::nn::Linear(dims.uih_embedding_dim, dims.output_embedding_dim));
  init_contextual(dims.contextual_feature_dim, dims.max_contextual_seq_len, dims.output_embedding_dim,
                  dims.contextual_group);
  if (options.has_action_encoder) {
    action_encoder_ = register_module("_action_encoder", ActionEncoder(options.action_encoder));
    action_mlp_ = register_module(
        "_action_embedding_mlp",
        make_contextualized_mlp(options.action_mlp, dims.max_contextual_seq_len * dims.contextual_feature_dim,
                                action_encoder_->output_dim(), dims.output_embedding_dim, config_path + ".action_mlp"));
  }
}

PreprocessedSequences UIHPreprocessor::forward(const std::map<std::string, torch::Tensor>& grouped) {
  const auto& uih = input(grouped, uih_key_ + ".sequence");
  auto uih_lengths = input(grouped, uih_key_ + ".sequence_length").to(torch::kInt64);
  const int64_t batch = uih_lengths.size(0);
  auto uih_offsets = complete_cumsum(uih_lengths);
  auto seq = input_projection_->forward(uih);

  auto ctx_in = contextual_input(grouped);
  torch::Tensor ctx;
  if (ctx_in.defined()) ctx = project_contextual(ctx_in);
  if (action_encoder_) {
    torch::Tensor watch;
    if (action_encoder_->need_watchtime()) watch = input(grouped, watchtime_key_ + ".sequence");
    auto action = action_encoder_->forward(input(grouped, action_key_ + ".sequence"), watch, uih_offsets,
                                           torch::zeros_like(uih_offsets))
                      .to(uih.scalar_type());
    seq = seq + action_mlp_->forward(action, uih_offsets, ctx_in);
  }
  PreprocessedSequences s;
  s.max_seq_len = batch > 0 ? uih_lengths.max().item<int64_t>() : 0;
  s.total_uih_len = uih.size(0);
  s.total_targets = 0;
  s.seq_lengths = uih_lengths;
  s.seq_offsets = uih_offsets;
  s.seq_timestamps = input(grouped, timestamp_key_ + ".sequence").reshape({-1});
  s.seq_embeddings = seq;
  prepend_contextual(ctx, &s);
  s.num_targets = torch::zeros_like(s.seq_lengths);
  return s;
}

}  // namespace tzrec::nn::gr
