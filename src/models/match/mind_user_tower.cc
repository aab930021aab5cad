#include "models/match/mind_user_tower.h"

#include <fmt/format.h>

#include "base/error.h"
#include "models/config_convert.h"

namespace tzrec::models {
namespace {

// The MLP of all layers but the last of `mlp` (TorchEasyRec's MIND: activation, use_bn and the
// first dropout_ratio only). Settings it would ignore are refused.
nn::MLPOptions leading_layers(const protos::MLP& mlp, const std::string& path, bool bias, int64_t dim) {
  if (mlp.use_ln()) throw NotSupportedError(path + ".use_ln (MIND's towers take no layer norm, as TorchEasyRec)");
  if (mlp.has_bias() && mlp.bias() != bias) {
    throw NotSupportedError(fmt::format("{}.bias {} (this MLP of MIND is {} a bias, as in TorchEasyRec)", path,
                                        mlp.bias(), bias ? "always with" : "never with"));
  }
  if (mlp.dropout_ratio_size() > 1) {
    throw ConfigError(fmt::format("{}.dropout_ratio: MIND takes one ratio for every layer of this MLP, got {}", path,
                                  mlp.dropout_ratio_size()));
  }
  nn::MLPOptions o;
  o.hidden_units.assign(mlp.hidden_units().begin(), mlp.hidden_units().end() - 1);
  if (mlp.dropout_ratio_size() == 1) o.dropout_ratio = {mlp.dropout_ratio(0)};
  o.activation = mlp.activation();
  o.use_bn = mlp.use_bn();
  o.bias = bias;
  o.dim = dim;
  return o;
}

}  // namespace

MINDUserTowerImpl::MINDUserTowerImpl(const protos::MINDUserTower& tower, const std::string& path,
                                     embedding::EmbeddingGroup group, const protos::ModelConfig& model_config,
                                     const MatchOptions& options)
    : input_(tower.input()), history_(tower.history_input()), cosine_(options.cosine) {
  embedding_group = register_module("embedding_group", std::move(group));
  dropouts_.init(*this, model_config, {input_},
                 [&](const std::string& g) { return embedding_group->group_feature_dims(g); });
  if (!tower.has_user_mlp() || tower.user_mlp().hidden_units_size() == 0) {
    throw ConfigError(path + ".user_mlp.hidden_units: required; e.g. user_mlp { hidden_units: [256, 128] }");
  }
  const protos::MLP& user = tower.user_mlp();
  const int64_t user_in = embedding_group->group_total_dim(input_);
  const int64_t user_out = user.hidden_units(user.hidden_units_size() - 1);
  if (user.hidden_units_size() > 1) {
    user_mlp_ = register_module("user_mlp", nn::MLP(user_in, leading_layers(user, path + ".user_mlp", true, 2),
                                                    path + ".user_mlp"));
    user_linear_ = register_module("user_mlp_out", torch::nn::Linear(user_mlp_->output_dim(), user_out));
  } else {
    leading_layers(user, path + ".user_mlp", true, 2);  // its checks
    user_linear_ = register_module("user_mlp", torch::nn::Linear(user_in, user_out));
  }
  const embedding::SequenceEmbeddingGroup sequences = embedding_group->sequence_groups();
  TORCH_CHECK(sequences, "MIND user tower without a sequence group");
  int64_t capsule_in = sequences->sequence_dim(history_);
  if (tower.has_hist_seq_mlp() && tower.hist_seq_mlp().hidden_units_size() > 0) {
    const protos::MLP& hist = tower.hist_seq_mlp();
    const int64_t hist_out = hist.hidden_units(hist.hidden_units_size() - 1);
    const nn::MLPOptions lead = leading_layers(hist, path + ".hist_seq_mlp", false, 3);
    if (hist.hidden_units_size() > 1) {
      hist_mlp_ = register_module("_hist_seq_mlp", nn::MLP(capsule_in, lead, path + ".hist_seq_mlp"));
      hist_linear_ = register_module(
          "_hist_seq_mlp_out", torch::nn::Linear(torch::nn::LinearOptions(hist_mlp_->output_dim(), hist_out).bias(false)));
    } else {
      hist_linear_ =
          register_module("_hist_seq_mlp", torch::nn::Linear(torch::nn::LinearOptions(capsule_in, hist_out).bias(false)));
    }
    capsule_in = hist_out;
  }
  if (!tower.has_capsule_config()) throw ConfigError(path + ".capsule_config: required");
  const protos::B2ICapsule& c = tower.capsule_config();
  if (c.routing_init_method() != "normal" && c.routing_init_method() != "zeros") {
    throw ConfigError(fmt::format("{}.capsule_config.routing_init_method: \"{}\" is not a method; use \"normal\" or "
                                  "\"zeros\"",
                                  path, c.routing_init_method()));
  }
  nn::CapsuleOptions co;
  co.max_k = c.max_k();
  co.max_seq_len = c.max_seq_len();
  co.high_dim = c.high_dim();
  co.num_iters = c.num_iters();
  co.routing_logits_scale = c.routing_logits_scale();
  co.routing_logits_stddev = c.routing_logits_stddev();
  co.squash_pow = c.squash_pow();
  co.const_caps_num = c.const_caps_num();
  co.normal_init = c.routing_init_method() == "normal";
  capsule_ = register_module("_capsule_layer", nn::CapsuleLayer(co, capsule_in, path + ".capsule_config"));
  if (!tower.has_concat_mlp()) throw ConfigError(path + ".concat_mlp: required");
  nn::MLPOptions concat = to_mlp_options(tower.concat_mlp());
  concat.dim = 3;
  concat_mlp_ = register_module("_concat_mlp", nn::MLP(user_out + co.high_dim, concat, path + ".concat_mlp"));
  if (options.output_dim > 0) {
    output_ = register_module(
        "output", torch::nn::Linear(torch::nn::LinearOptions(concat_mlp_->output_dim(), options.output_dim).bias(false)));
  }
}

std::pair<torch::Tensor, torch::Tensor> MINDUserTowerImpl::forward(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> grouped = embedding_group->forward(batch);
  dropouts_.apply(grouped);
  torch::Tensor user = grouped.at(input_);
  if (user_mlp_) user = user_mlp_->forward(user);
  user = user_linear_->forward(user);  // [B, U]
  torch::Tensor hist = grouped.at(history_ + ".sequence");  // [B, S, d]
  if (hist_mlp_) hist = hist_mlp_->forward(hist);
  if (hist_linear_) hist = hist_linear_->forward(hist);
  auto [capsules, mask] = capsule_->forward(hist, grouped.at(history_ + ".sequence_length"));  // [B, K, H], [B, K]
  const torch::Tensor valid = mask.unsqueeze(-1).to(capsules.scalar_type());
  torch::Tensor interests = torch::cat({user.unsqueeze(1).expand({-1, capsules.size(1), -1}), capsules}, -1) * valid;
  interests = concat_mlp_->forward(interests) * valid;
  if (output_) interests = output_->forward(interests);
  if (cosine_) {
    interests = torch::nn::functional::normalize(interests, torch::nn::functional::NormalizeFuncOptions().p(2.0).dim(-1));
  }
  return {interests, mask};
}

}  // namespace tzrec::models
