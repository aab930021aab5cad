#include "models/generative/hstu_config.h"

#include <fmt/format.h>

#include "base/error.h"
#include "models/config_convert.h"
#include "models/model_inputs.h"

namespace tzrec::models {

namespace {

nn::gr::ContextualizedMLPOptions to_contextualized_mlp(const protos::GRContextualizedMLP& c) {
  nn::gr::ContextualizedMLPOptions o;
  o.type = detail::oneof_field(c, "contextualized_mlp");
  if (c.has_simple_mlp()) o.hidden_dim = c.simple_mlp().hidden_dim();
  if (c.has_parameterized_mlp()) {
    o.hidden_dim = c.parameterized_mlp().hidden_dim();
    o.contextual_dropout_ratio = c.parameterized_mlp().contextual_dropout_ratio();
  }
  return o;
}

nn::gr::ActionEncoderOptions to_action_encoder(const protos::GRActionEncoder& a, const std::string& path) {
  if (!a.has_simple_action_encoder()) throw ConfigError(path + ": set simple_action_encoder");
  const auto& s = a.simple_action_encoder();
  nn::gr::ActionEncoderOptions o;
  o.action_embedding_dim = s.action_embedding_dim();
  if (o.action_embedding_dim <= 0) {
    throw ConfigError(path + ".simple_action_encoder.action_embedding_dim: must be positive");
  }
  o.action_weights.assign(s.action_weights().begin(), s.action_weights().end());
  o.watchtime_to_action_thresholds.assign(s.watchtime_to_action_thresholds().begin(),
                                          s.watchtime_to_action_thresholds().end());
  o.watchtime_to_action_weights.assign(s.watchtime_to_action_weights().begin(), s.watchtime_to_action_weights().end());
  if (o.watchtime_to_action_thresholds.size() != o.watchtime_to_action_weights.size()) {
    throw ConfigError(fmt::format("{}.simple_action_encoder.watchtime_to_action_weights: {} values for {} "
                                  "watchtime_to_action_thresholds; give one weight per threshold",
                                  path, o.watchtime_to_action_weights.size(), o.watchtime_to_action_thresholds.size()));
  }
  if (o.action_weights.empty() && o.watchtime_to_action_weights.empty()) {
    throw ConfigError(path + ".simple_action_encoder.action_weights: at least one action bit is required");
  }
  o.embedding_init_std = s.embedding_init_std();
  return o;
}

template <class Pre>
void set_actions(const Pre& p, const std::string& path, nn::gr::InputPreprocessorOptions* o) {
  if (p.has_action_encoder()) {
    o->has_action_encoder = true;
    o->action_encoder = to_action_encoder(p.action_encoder(), path + ".action_encoder");
  }
  if (p.has_action_mlp()) {
    o->has_action_mlp = true;
    o->action_mlp = to_contextualized_mlp(p.action_mlp());
  }
}

template <class Pre>
void set_content(const Pre& p, nn::gr::InputPreprocessorOptions* o) {
  o->content_encoder.type = detail::oneof_field(p.content_encoder(), "content_encoder");
  if (p.content_encoder().has_mlp_content_encoder()) {
    o->content_encoder.uih_mlp = to_mlp_options(p.content_encoder().mlp_content_encoder().uih_mlp());
    o->content_encoder.target_mlp = to_mlp_options(p.content_encoder().mlp_content_encoder().target_mlp());
  }
  o->content_mlp = to_contextualized_mlp(p.content_mlp());
}

nn::gr::InputPreprocessorOptions to_preprocessor(const protos::GRInputPreprocessor& p, const std::string& path) {
  nn::gr::InputPreprocessorOptions o;
  o.type = detail::oneof_field(p, "input_preprocessor");
  const std::string sub = path + "." + o.type;
  if (p.has_contextual_preprocessor()) {
    set_actions(p.contextual_preprocessor(), sub, &o);
    set_content(p.contextual_preprocessor(), &o);
    o.enable_interleaving = false;
  } else if (p.has_contextual_interleave_preprocessor()) {
    set_actions(p.contextual_interleave_preprocessor(), sub, &o);
    set_content(p.contextual_interleave_preprocessor(), &o);
    o.enable_interleaving = p.contextual_interleave_preprocessor().enable_interleaving();
  } else if (p.has_uih_preprocessor()) {
    set_actions(p.uih_preprocessor(), sub, &o);
  }
  return o;
}

}  // namespace

nn::gr::HSTUOptions to_hstu_options(const protos::HSTU& hstu, const std::string& config_path) {
  nn::gr::HSTUOptions o;
  const protos::STU& s = hstu.stu();
  const std::string stu_path = config_path + ".stu";
  for (auto [value, field] : {std::pair<uint32_t, const char*>{s.embedding_dim(), "embedding_dim"},
                              {s.num_heads(), "num_heads"},
                              {s.hidden_dim(), "hidden_dim"},
                              {s.attention_dim(), "attention_dim"}}) {
    if (value == 0) throw ConfigError(fmt::format("{}.{}: required and must be positive", stu_path, field));
  }
  if (s.output_dropout_ratio() < 0 || s.output_dropout_ratio() >= 1) {
    throw ConfigError(fmt::format("{}.output_dropout_ratio: must be in [0, 1), got {}", stu_path,
                                  s.output_dropout_ratio()));
  }
  o.stu.embedding_dim = s.embedding_dim();
  o.stu.num_heads = s.num_heads();
  o.stu.hidden_dim = s.hidden_dim();
  o.stu.attention_dim = s.attention_dim();
  o.stu.output_dropout_ratio = s.output_dropout_ratio();
  o.stu.max_attn_len = s.max_attn_len();
  o.stu.attn_alpha = s.has_attn_alpha() ? s.attn_alpha() : 0.0;
  o.stu.use_group_norm = s.use_group_norm();
  o.stu.recompute_normed_x = s.recompute_normed_x();
  o.stu.recompute_uvqk = s.recompute_uvqk();
  o.stu.recompute_y = s.recompute_y();
  o.stu.sort_by_length = s.sort_by_length();
  o.stu.contextual_seq_len = s.contextual_seq_len();
  o.stu.sla_k1 = s.sla_k1();
  o.stu.sla_k2 = s.sla_k2();
  o.stu.scaling_seqlen = s.scaling_seqlen();
  o.input_dropout_ratio = hstu.input_dropout_ratio();
  o.attn_num_layers = hstu.attn_num_layers();
  const protos::GRPositionalEncoder& pe = hstu.positional_encoder();
  nn::gr::PositionalEncoderOptions pos;
  pos.num_position_buckets = pe.num_position_buckets();
  pos.num_time_buckets = pe.num_time_buckets();
  pos.use_time_encoding = pe.use_time_encoding();
  pos.time_bucket_fn = pe.time_bucket_fn();
  pos.time_bucket_increments = pe.time_bucket_increments();
  const std::string pe_path = config_path + ".positional_encoder";
  if (pos.num_position_buckets <= 0) throw ConfigError(pe_path + ".num_position_buckets: required and must be positive");
  if (pos.use_time_encoding && pos.num_time_buckets <= 0) {
    throw ConfigError(pe_path + ".num_time_buckets: must be positive with use_time_encoding");
  }
  if (pos.time_bucket_fn != "sqrt" && pos.time_bucket_fn != "log") {
    throw ConfigError(fmt::format("{}.time_bucket_fn: '{}' is not sqrt or log", pe_path, pos.time_bucket_fn));
  }
  if (pos.time_bucket_increments <= 0) throw ConfigError(pe_path + ".time_bucket_increments: must be positive");
  o.positional_encoder = pos;
  o.input_preprocessor = to_preprocessor(hstu.input_preprocessor(), config_path + ".input_preprocessor");
  const protos::GROutputPostprocessor& post = hstu.output_postprocessor();
  o.output_postprocessor.type = detail::oneof_field(post, "output_postprocessor");
  if (post.has_timestamp_layernorm_postprocessor()) {
    const auto& t = post.timestamp_layernorm_postprocessor();
    o.output_postprocessor.time_duration_period_units.assign(t.time_duration_period_units().begin(),
                                                             t.time_duration_period_units().end());
    o.output_postprocessor.time_duration_units_per_period.assign(t.time_duration_units_per_period().begin(),
                                                                 t.time_duration_units_per_period().end());
  }
  o.attn_truncation_split_layer = hstu.attn_truncation_split_layer();
  o.attn_truncation_tail_len = hstu.attn_truncation_tail_len();
  return o;
}

bool set_contextual_dims(const embedding::EmbeddingGroupImpl& group, bool concat,
                         const std::function<std::string(const std::string&)>& group_path,
                         const std::string& concat_hint, nn::gr::InputPreprocessorDims* dims) {
  std::vector<int64_t> ctx_dims;
  if (group.has_group("contextual")) {
    dims->contextual_group = "contextual";
    ctx_dims = group.group_feature_dims("contextual");
  } else if (group.sequence_groups()->has_group("contextual")) {
    dims->contextual_group = "contextual.query";
    const int64_t d = group.sequence_groups()->query_dim("contextual");
    if (d > 0) ctx_dims = {d};
  } else {
    return false;
  }
  if (ctx_dims.empty()) return true;
  if (concat) {
    int64_t sum = 0;
    for (int64_t d : ctx_dims) sum += d;
    dims->contextual_feature_dim = sum;
    dims->max_contextual_seq_len = 1;
    return true;
  }
  for (int64_t d : ctx_dims) {
    if (d != ctx_dims.front()) {
      throw ConfigError(fmt::format("{}: the contextual features have different output dims ({} and {}); give them "
                                    "one embedding_dim{}",
                                    group_path("contextual"), ctx_dims.front(), d, concat_hint));
    }
  }
  dims->contextual_feature_dim = ctx_dims.front();
  dims->max_contextual_seq_len = static_cast<int64_t>(ctx_dims.size());
  return true;
}

std::map<std::string, torch::Tensor> flip_grouped_rows(const std::map<std::string, torch::Tensor>& grouped) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [k, v] : grouped) out[k] = v.flip({0});
  return out;
}

}  // namespace tzrec::models
