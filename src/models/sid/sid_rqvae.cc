#include "models/sid/sid_rqvae.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "base/logging.h"
#include "dist/process_group.h"
#include "nn/mlp.h"

namespace tzrec::models {
namespace {

nn::sid::ForwardMode sid_forward_mode(const std::string& value, const std::string& path) {
  if (value == "ste") return nn::sid::ForwardMode::kSte;
  if (value == "gumbel_softmax") return nn::sid::ForwardMode::kGumbelSoftmax;
  throw ConfigError(fmt::format("{}: \"{}\" is not a forward mode; use \"ste\" or \"gumbel_softmax\"", path, value));
}

nn::sid::Distance sid_distance_type(const std::string& value, const std::string& path) {
  if (value == "l2") return nn::sid::Distance::kL2;
  if (value == "cosine") return nn::sid::Distance::kCosine;
  throw ConfigError(fmt::format("{}: \"{}\" is not a distance; use \"l2\" or \"cosine\"", path, value));
}

}  // namespace

SidRqvae::SidRqvae(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
                   std::vector<std::string> labels, std::vector<std::string> sample_weights)
    : SidModel(model_config, features, sample_weights, "sid_rqvae", model_config.sid_rqvae().codebook(),
               model_config.sid_rqvae().normalize_residuals(),
               model_config.sid_rqvae().has_candidate_output_config()
                   ? &model_config.sid_rqvae().candidate_output_config()
                   : nullptr) {
  const protos::SidRqvae& cfg = model_config_.sid_rqvae();
  init_sid_losses();
  use_contrastive_ = cfg.has_contrastive_config();
  if (use_contrastive_ != has_contrastive_loss()) {
    throw ConfigError(
        fmt::format("{}.contrastive_config: the pair structure (contrastive_config) and a "
                    "contrastive_loss entry in model_config.losses must be set together; got "
                    "contrastive_config {}, contrastive_loss {}",
                    path_, use_contrastive_ ? "set" : "unset", has_contrastive_loss() ? "set" : "unset"));
  }
  if (use_contrastive_) {
    pair_group_ = cfg.contrastive_config().pair_feature_group();
    pair_flag_group_ = cfg.contrastive_config().pair_flag_feature_group();
    const std::string cpath = path_ + ".contrastive_config";
    for (const auto& [field, group] : {std::pair<std::string, std::string>{"pair_feature_group", pair_group_},
                                       {"pair_flag_feature_group", pair_flag_group_}}) {
      if (!embedding_group_->has_group(group)) {
        throw ConfigError(
            fmt::format("{}.{}: '{}' is not a DEEP feature group of model_config.feature_groups", cpath, field, group));
      }
    }
    const int64_t pair_dim = embedding_group_->group_total_dim(pair_group_);
    if (pair_dim != input_dim_) {
      throw ConfigError(
          fmt::format("{}.pair_feature_group: group '{}' has total dim {}, but it goes through the "
                      "encoder of the main group '{}' (dim {}); the two must match",
                      cpath, pair_group_, pair_dim, feature_group_, input_dim_));
    }
    const int64_t flag_dim = embedding_group_->group_total_dim(pair_flag_group_);
    if (flag_dim != 1) {
      throw ConfigError(
          fmt::format("{}.pair_flag_feature_group: group '{}' must be one flag of width 1 (> 0.5: a "
                      "contrastive pair), got total dim {}",
                      cpath, pair_flag_group_, flag_dim));
    }
  }
  if (cfg.embed_dim() < 1) throw ConfigError(fmt::format("{}.embed_dim: must be >= 1, got 0", path_));
  const int64_t embed_dim = cfg.embed_dim();
  std::vector<int64_t> hidden(cfg.hidden_dims().begin(), cfg.hidden_dims().end());
  if (hidden.empty()) hidden = {input_dim_ / 2};
  for (size_t i = 0; i < hidden.size(); ++i) {
    if (hidden[i] < 1) {
      throw ConfigError(
          fmt::format("{}.hidden_dims: every entry must be >= 1, got {}{}", path_, hidden[i],
                      cfg.hidden_dims().empty()
                          ? fmt::format(" (the default input_dim / 2 of input_dim {}); set hidden_dims", input_dim_)
                          : ""));
    }
  }
  nn::MLPOptions enc;
  enc.hidden_units = hidden;
  nn::MLPOptions dec;
  dec.hidden_units.assign(hidden.rbegin(), hidden.rend());
  encoder_ = register_module("_encoder", torch::nn::Sequential(nn::MLP(input_dim_, enc, path_ + ".hidden_dims"),
                                                               torch::nn::Linear(hidden.back(), embed_dim)));
  decoder_ = register_module("_decoder", torch::nn::Sequential(nn::MLP(embed_dim, dec, path_ + ".hidden_dims"),
                                                               torch::nn::Linear(hidden.front(), input_dim_)));

  nn::sid::ResidualVectorQuantizerOptions q;
  q.embed_dim = embed_dim;
  q.n_embed = n_embed_;
  q.forward_mode = sid_forward_mode(cfg.forward_mode(), path_ + ".forward_mode");
  q.normalize_residuals = normalize_residuals_;
  q.distance = sid_distance_type(cfg.distance_type(), path_ + ".distance_type");
  q.rotation_trick = cfg.rotation_trick();
  q.kmeans_init = cfg.kmeans_init();
  // An unset sinkhorn_config reads its defaults: enabled, 5 iterations, epsilon 10.
  q.use_sinkhorn = cfg.sinkhorn_config().enabled();
  q.sinkhorn_iters = cfg.sinkhorn_config().iters();
  q.sinkhorn_epsilon = cfg.sinkhorn_config().epsilon();
  q.candidate = candidate_;
  quantizer_ = register_module("_quantizer", nn::sid::ResidualVectorQuantizer(q, path_));
  log::debug("sid_rqvae: input_dim {}, embed_dim {}, hidden_dims [{}], codebooks [{}], contrastive {}", input_dim_,
             embed_dim, fmt::join(hidden, ", "), fmt::join(n_embed_, ", "), use_contrastive_);
}

SidRqvae::Pass SidRqvae::rqvae_pass(const torch::Tensor& x) {
  Pass p;
  p.z_e = encoder_->forward(x);
  p.quant = quantizer_->forward(p.z_e);
  p.x_hat = decoder_->forward(p.quant.quantized_embeddings);
  return p;
}

void SidRqvae::set_process_group(dist::ProcessGroup* pg) {
  Model::set_process_group(pg);
  auto ranks = std::make_shared<nn::Collectives>();
  if (pg != nullptr && pg->world_size() > 1) {
    ranks->world_size = pg->world_size();
    ranks->rank = pg->rank();
    ranks->all_reduce_sum = [pg](torch::Tensor& t) { pg->all_reduce(t, dist::ReduceOp::kSum, "rq-vae sinkhorn sums"); };
    ranks->broadcast = [pg](torch::Tensor& t, int root) { pg->broadcast(t, root, "rq-vae k-means init"); };
  }
  quantizer_->set_collectives(ranks);
}

TensorMap SidRqvae::predict_impl(const sparse::Batch& batch) {
  const auto grouped = build_sid_input(batch);
  const torch::Tensor& embedding = grouped.at(feature_group_);
  quantizer_->set_inference(is_inference());
  if (is_inference()) return sid_predictions(quantizer_->forward(encoder_->forward(embedding)));
  if (!use_contrastive_) {
    Pass p = rqvae_pass(embedding);
    return {{"codes", p.quant.cluster_ids},
            {"x_hat", p.x_hat},
            {"recon_target", embedding},
            {"encoder_out", p.z_e},
            {"latents", p.quant.latents}};
  }
  const torch::Tensor& pair = grouped.at(pair_group_);
  const torch::Tensor& flag = grouped.at(pair_flag_group_);
  const torch::Tensor pair_mask = flag.reshape({flag.size(0), -1}).select(1, 0) > 0.5;
  Pass a = rqvae_pass(embedding);
  Pass b = rqvae_pass(pair);
  return {{"codes", a.quant.cluster_ids},
          {"x_hat", a.x_hat},
          {"recon_target", embedding},
          {"recon_mask", pair_mask.logical_not()},
          {"encoder_out", torch::cat({a.z_e, b.z_e}, 0)},
          {"latents", torch::cat({a.quant.latents, b.quant.latents}, 0)},
          {"embed_a", a.x_hat},
          {"embed_b", b.x_hat},
          {"embed_a_ori", embedding},
          {"embed_b_ori", pair},
          {"pair_mask", pair_mask}};
}

}  // namespace tzrec::models
