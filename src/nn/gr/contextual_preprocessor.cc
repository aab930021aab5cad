#include "nn/gr/contextual_preprocessor.h"

#include <vector>

#include "nn/gr/jagged.h"

namespace tzrec::nn::gr {

namespace {

std::string channel_key(const std::string& name, const std::string& suffix) {
  return (name.empty() ? std::string("uih") : name) + suffix;
}

}  // namespace

ContextualPreprocessor::ContextualPreprocessor(const InputPreprocessorOptions& options,
                                               const InputPreprocessorDims& dims, const std::string& config_path)
    : enable_interleaving_(options.type == "contextual_interleave_preprocessor" && options.enable_interleaving),
      uih_key_(channel_key(dims.name, "")),
      action_key_(channel_key(dims.name, "_action")),
      watchtime_key_(channel_key(dims.name, "_watchtime")),
      timestamp_key_(channel_key(dims.name, "_timestamp")) {
  init_contextual(dims.contextual_feature_dim, dims.max_contextual_seq_len, dims.output_embedding_dim,
                  dims.contextual_group);
  const int64_t contextual_dim = dims.max_contextual_seq_len * dims.contextual_feature_dim;
  content_encoder_ = register_module("_content_encoder",
                                     make_content_encoder(options.content_encoder, dims.uih_embedding_dim,
                                                          dims.target_embedding_dim, config_path + ".content_encoder"));
  content_mlp_ = register_module(
      "_content_embedding_mlp",
      make_contextualized_mlp(options.content_mlp, contextual_dim, content_encoder_->output_dim(),
                              dims.output_embedding_dim, config_path + ".content_mlp"));
  if (options.has_action_encoder) {
    action_encoder_ = register_module("_action_encoder", ActionEncoder(options.action_encoder));
    action_mlp_ = register_module("_action_embedding_mlp",
                                  make_contextualized_mlp(options.action_mlp, contextual_dim, action_encoder_->output_dim(),
                                                          dims.output_embedding_dim, config_path + ".action_mlp"));
  }
}

PreprocessedSequences ContextualPreprocessor::forward(const std::map<std::string, torch::Tensor>& grouped) {
  const auto& uih = input(grouped, uih_key_ + ".sequence");
  auto uih_lengths = input(grouped, uih_key_ + ".sequence_length").to(torch::kInt64);
  const auto& targets = input(grouped, "candidate.sequence");
  auto num_targets = input(grouped, "candidate.sequence_length").to(torch::kInt64);
  const int64_t batch = uih_lengths.size(0);
  const int64_t max_uih = batch > 0 ? uih_lengths.max().item<int64_t>() : 0;
  const int64_t max_targets = batch > 0 ? num_targets.max().item<int64_t>() : 0;
  const int64_t total_uih = uih.size(0);
  const int64_t total_targets = targets.size(0);
  auto uih_offsets = complete_cumsum(uih_lengths);
  auto target_offsets = complete_cumsum(num_targets);

  auto ctx_in = contextual_input(grouped);
  torch::Tensor ctx;
  if (ctx_in.defined()) ctx = project_contextual(ctx_in);

  auto content = content_encoder_->forward(uih, targets, uih_offsets, target_offsets);
  auto seq_offsets = uih_offsets + target_offsets;
  auto seq_lengths = uih_lengths + num_targets;
  content = content_mlp_->forward(content, seq_offsets, ctx_in);

  torch::Tensor action;
  if (action_encoder_) {
    torch::Tensor watch;
    if (action_encoder_->need_watchtime()) watch = input(grouped, watchtime_key_ + ".sequence");
    action = action_encoder_->forward(input(grouped, action_key_ + ".sequence"), watch, uih_offsets, target_offsets)
                 .to(uih.scalar_type());
    action = action_mlp_->forward(action, seq_offsets, ctx_in);
  }
  auto timestamps = concat_2d_jagged(input(grouped, timestamp_key_ + ".sequence").reshape({-1, 1}),
                                     input(grouped, "candidate_timestamp.sequence").reshape({-1, 1}), uih_offsets,
                                     target_offsets)
                        .squeeze(-1);

  PreprocessedSequences s;
  const int64_t dim = content.size(1);
  if (enable_interleaving_) {
    auto ts2 = timestamps.repeat_interleave(2);
    auto emb2 = torch::stack({content, action}, 1).reshape({-1, dim});
    if (interleave_targets()) {
      s.seq_lengths = seq_lengths * 2;
      s.max_seq_len = (max_uih + max_targets) * 2;
      s.num_targets = num_targets * 2;
      s.total_uih_len = total_uih * 2;
      s.total_targets = total_targets * 2;
      s.seq_embeddings = emb2;
      s.seq_timestamps = ts2;
    } else {
      // Keep every history pair and each target's content item (its even position).
      const int64_t* off = seq_offsets.data_ptr<int64_t>();
      const int64_t* ul = uih_lengths.data_ptr<int64_t>();
      std::vector<int64_t> keep;
      keep.reserve(static_cast<size_t>(2 * total_uih + total_targets));
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t start = 2 * off[b];
        const int64_t n2 = 2 * (off[b + 1] - off[b]);
        for (int64_t i = 0; i < n2; ++i) {
          if (i < 2 * ul[b] || i % 2 == 0) keep.push_back(start + i);
        }
      }
      auto idx = torch::tensor(keep, torch::kInt64).reshape({static_cast<int64_t>(keep.size())});
      s.seq_lengths = seq_lengths * 2 - num_targets;
      s.max_seq_len = 2 * max_uih + max_targets;
      s.num_targets = num_targets;
      s.total_uih_len = total_uih * 2;
      s.total_targets = total_targets;
      s.seq_embeddings = emb2.index_select(0, idx);
      s.seq_timestamps = ts2.index_select(0, idx);
    }
  } else {
    s.max_seq_len = max_uih + max_targets;
    s.seq_lengths = seq_lengths;
    s.num_targets = num_targets;
    s.seq_timestamps = timestamps;
    s.seq_embeddings = action.defined() ? content + action : content;
    s.total_uih_len = total_uih;
    s.total_targets = total_targets;
  }
  s.seq_offsets = complete_cumsum(s.seq_lengths);
  prepend_contextual(ctx, &s);
  return s;
}

}  // namespace tzrec::nn::gr
