#include "nn/gr/hstu_transducer.h"

#include <fmt/format.h>

#include "base/error.h"
#include "nn/gr/jagged.h"

namespace tzrec::nn::gr {

HSTUPipelineImpl::HSTUPipelineImpl(const HSTUOptions& options, InputPreprocessorDims dims, int64_t scaling_seqlen,
                                   const std::string& config_path, std::string query_time_key)
    : embedding_dim_(options.stu.embedding_dim),
      input_dropout_ratio_(options.input_dropout_ratio),
      query_time_key_(std::move(query_time_key)) {
  if (options.attn_num_layers < 1) {
    throw ConfigError(fmt::format("{}.attn_num_layers: must be at least 1", config_path));
  }
  if (options.input_dropout_ratio < 0 || options.input_dropout_ratio >= 1) {
    throw ConfigError(fmt::format("{}.input_dropout_ratio: must be in [0, 1), got {}", config_path,
                                  options.input_dropout_ratio));
  }
  const int64_t split = options.attn_truncation_split_layer, tail = options.attn_truncation_tail_len;
  if ((split > 0) != (tail > 0) || (split > 0 && split >= options.attn_num_layers)) {
    throw ConfigError(fmt::format("{}.attn_truncation_split_layer: truncation needs both attn_truncation_split_layer "
                                  "in (0, attn_num_layers = {}) and attn_truncation_tail_len > 0, or neither; got {} "
                                  "and {}",
                                  config_path, options.attn_num_layers, split, tail));
  }
  dims.output_embedding_dim = embedding_dim_;
  preprocessor_ = register_module(
      "_input_preprocessor", make_input_preprocessor(options.input_preprocessor, dims, config_path + ".input_preprocessor"));
  STUOptions stu = options.stu;
  if (stu.contextual_seq_len < 0) stu.contextual_seq_len = preprocessor_->contextual_seq_len();
  if (stu.scaling_seqlen < 0) stu.scaling_seqlen = scaling_seqlen;
  stu_ = register_module("_stu_module",
                         STUStack(std::vector<STUOptions>(static_cast<size_t>(options.attn_num_layers), stu), split, tail));
  if (options.positional_encoder.has_value()) {
    positional_encoder_ = register_module(
        "_positional_encoder",
        PositionalEncoder(embedding_dim_, preprocessor_->contextual_seq_len(), *options.positional_encoder));
  }
  postprocessor_ = register_module(
      "_output_postprocessor",
      make_output_postprocessor(options.output_postprocessor, embedding_dim_, config_path + ".output_postprocessor"));
}

HSTUPipelineImpl::Encoded HSTUPipelineImpl::encode(const std::map<std::string, torch::Tensor>& grouped) {
  PreprocessedSequences s = preprocessor_->forward(grouped);
  auto x = s.seq_embeddings;
  if (positional_encoder_) {
    torch::Tensor query_time;
    if (!query_time_key_.empty()) query_time = grouped.at(query_time_key_);
    x = positional_encoder_->forward(s.seq_offsets, s.seq_timestamps, x, s.num_targets, query_time);
  }
  x = torch::dropout(x, input_dropout_ratio_, is_training());
  STUStackOutput out = stu_->forward(x, s.seq_offsets, s.max_seq_len, s.num_targets);
  Encoded e{out.x, s.seq_timestamps, s.seq_lengths, s.num_targets};
  if (out.plan.has_value()) {
    e.timestamps = apply_stu_truncation_plan(e.timestamps, *out.plan);
    e.lengths = out.plan->new_lengths;
  }
  return e;
}

HSTUTransducerImpl::HSTUTransducerImpl(const HSTUOptions& options, InputPreprocessorDims dims, int64_t scaling_seqlen,
                                       const std::string& config_path)
    : HSTUPipelineImpl(options, std::move(dims), scaling_seqlen, config_path) {}

torch::Tensor HSTUTransducerImpl::forward(const std::map<std::string, torch::Tensor>& grouped) {
  const Encoded e = encode(grouped);
  // Each row: [its items before the targets | its targets].
  auto uih_offsets = complete_cumsum(e.lengths - e.num_targets);
  auto target_offsets = complete_cumsum(e.num_targets);
  auto candidates = split_2d_jagged(e.x, uih_offsets, target_offsets).second;
  auto candidate_ts = split_2d_jagged(e.timestamps.unsqueeze(-1), uih_offsets, target_offsets).second.squeeze(-1);
  if (preprocessor_->interleave_targets()) {
    candidates = candidates.view({-1, 2, candidates.size(-1)}).select(1, 0);
    candidate_ts = candidate_ts.view({-1, 2}).select(1, 0);
  }
  return postprocessor_->forward(candidates, candidate_ts);
}

HSTUTransducerStackImpl::HSTUTransducerStackImpl(std::vector<HSTUTransducer> transducers)
    : transducers_(std::move(transducers)) {
  auto list = register_module("_transducers", torch::nn::ModuleList());
  for (auto& t : transducers_) list->push_back(t);
}

torch::Tensor HSTUTransducerStackImpl::forward(const std::map<std::string, torch::Tensor>& grouped) {
  std::vector<torch::Tensor> parts;
  parts.reserve(transducers_.size());
  for (auto& t : transducers_) parts.push_back(t->forward(grouped));
  return torch::cat(parts, -1);
}

}  // namespace tzrec::nn::gr
