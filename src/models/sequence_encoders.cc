#include "models/sequence_encoders.h"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "models/config_convert.h"
#include "nn/din_encoder.h"
#include "nn/multi_window_din_encoder.h"
#include "nn/pooling_encoder.h"
#include "nn/self_attention_encoder.h"
#include "nn/simple_attention.h"

namespace tzrec::models {
namespace {

using embedding::SequenceEncoderHandle;
using embedding::SequenceEncoderRequest;

// An nn/ encoder (a module holder with forward(grouped) and output_dim()) behind the handle.
template <typename Holder>
SequenceEncoderHandle handle(Holder encoder) {
  const int64_t dim = encoder->output_dim();
  return SequenceEncoderHandle{encoder.ptr(), [encoder](const std::map<std::string, torch::Tensor>& grouped) mutable {
                                 return encoder->forward(grouped);
                               },
                               dim};
}

nn::MLPOptions required_attn_mlp(bool has, const protos::MLP& mlp, const std::string& path) {
  if (!has) throw ConfigError(path + ".attn_mlp: required, e.g. attn_mlp { hidden_units: [64] }");
  return to_mlp_options(mlp);
}

SequenceEncoderHandle din_encoder(const protos::SeqEncoderConfig& c, const SequenceEncoderRequest& r) {
  const protos::DINEncoder& m = c.din_encoder();
  const std::string path = r.path + ".din_encoder";
  nn::DINEncoderOptions o;
  o.attn_mlp = required_attn_mlp(m.has_attn_mlp(), m.attn_mlp(), path);
  o.max_seq_length = m.max_seq_length();
  return handle(nn::DINEncoder(r.sequence_dim, r.query_dim, r.input, std::move(o), path));
}

SequenceEncoderHandle simple_attention(const protos::SeqEncoderConfig& c, const SequenceEncoderRequest& r) {
  nn::SimpleAttentionOptions o;
  o.max_seq_length = c.simple_attention().max_seq_length();
  return handle(nn::SimpleAttention(r.sequence_dim, r.query_dim, r.input, o, r.path + ".simple_attention"));
}

SequenceEncoderHandle pooling_encoder(const protos::SeqEncoderConfig& c, const SequenceEncoderRequest& r) {
  nn::PoolingEncoderOptions o;
  o.pooling_type = c.pooling_encoder().pooling_type();
  o.max_seq_length = c.pooling_encoder().max_seq_length();
  return handle(nn::PoolingEncoder(r.sequence_dim, r.query_dim, r.input, o, r.path + ".pooling_encoder"));
}

SequenceEncoderHandle multi_window_din_encoder(const protos::SeqEncoderConfig& c, const SequenceEncoderRequest& r) {
  const protos::MultiWindowDINEncoder& m = c.multi_window_din_encoder();
  const std::string path = r.path + ".multi_window_din_encoder";
  nn::MultiWindowDINEncoderOptions o;
  o.attn_mlp = required_attn_mlp(m.has_attn_mlp(), m.attn_mlp(), path);
  o.windows_len.assign(m.windows_len().begin(), m.windows_len().end());
  return handle(nn::MultiWindowDINEncoder(r.sequence_dim, r.query_dim, r.input, std::move(o), path));
}

SequenceEncoderHandle self_attention_encoder(const protos::SeqEncoderConfig& c, const SequenceEncoderRequest& r) {
  const protos::SelfAttentionEncoder& m = c.self_attention_encoder();
  nn::SelfAttentionEncoderOptions o;
  o.multihead_attn_dim = m.multihead_attn_dim();
  o.num_heads = m.num_heads();
  o.dropout = m.dropout();  // float in the proto, as in TorchEasyRec
  o.max_seq_length = m.max_seq_length();
  return handle(
      nn::SelfAttentionEncoder(r.sequence_dim, r.query_dim, r.input, o, r.path + ".self_attention_encoder"));
}

struct Builder {
  const char* oneof_field;  // field of SeqEncoderConfig.seq_module
  SequenceEncoderHandle (*build)(const protos::SeqEncoderConfig&, const SequenceEncoderRequest&);
};

// One line per encoder type.
constexpr Builder kBuilders[] = {
    {"din_encoder", din_encoder},
    {"simple_attention", simple_attention},
    {"pooling_encoder", pooling_encoder},
    {"multi_window_din_encoder", multi_window_din_encoder},
    {"self_attention_encoder", self_attention_encoder},
};

const protos::SeqEncoderConfig& encoder_config(const protos::ModelConfig& model_config,
                                               const SequenceEncoderRequest& r) {
  for (const protos::FeatureGroupConfig& g : model_config.feature_groups()) {
    if (g.group_name() == r.group && static_cast<int>(r.index) < g.sequence_encoders_size()) {
      return g.sequence_encoders(static_cast<int>(r.index));
    }
  }
  TORCH_CHECK(false, "sequence encoder ", r.index, " of group ", r.group, " is not in the model config");
}

}  // namespace

embedding::SequenceEncoderFactory sequence_encoder_factory(const protos::ModelConfig& model_config) {
  return [&model_config](const SequenceEncoderRequest& r) {
    const protos::SeqEncoderConfig& c = encoder_config(model_config, r);
    const auto* field = c.GetDescriptor()->FindOneofByName("seq_module");
    const auto* set = c.GetReflection()->GetOneofFieldDescriptor(c, field);
    std::vector<std::string> known;
    for (const Builder& b : kBuilders) {
      if (set != nullptr && set->name() == b.oneof_field) return b.build(c, r);
      known.push_back(b.oneof_field);
    }
    if (set != nullptr) throw NotSupportedError(fmt::format("{}.{}", r.path, set->name()));
    throw ConfigError(fmt::format("{}: set one sequence encoder ({})", r.path, fmt::join(known, ", ")));
  };
}

}  // namespace tzrec::models
