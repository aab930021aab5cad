#include "models/sid/sid_model.h"

#include "dist/all_gather_with_grad.h"

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"

namespace tzrec::models {

SidModel::SidModel(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
                   const std::vector<std::string>& sample_weights, const std::string& model_name,
                   const google::protobuf::RepeatedField<uint32_t>& codebook,
                   bool normalize_residuals, const protos::SidCandidateOutputConfig* candidate_output_config)
    : Model(model_config, {}, {}), path_("model_config." + model_name), normalize_residuals_(normalize_residuals) {
  for (const char* field : {"metrics", "train_metrics"}) {
    const auto* fd = model_config_.GetDescriptor()->FindFieldByName(field);
    if (model_config_.GetReflection()->FieldSize(model_config_, fd) > 0) {
      log::warning(
          "model_config.{}: ignored by {} (as in TorchEasyRec): it reports mse, rel_loss and "
          "unique_sid_ratio",
          field, model_name);
    }
  }
  if (!sample_weights.empty()) {
    log::warning("data_config.sample_weight_fields: {} weights none of its losses (as in TorchEasyRec); ignored",
                 model_name);
  }
  if (model_config_.has_variational_dropout()) {
    log::warning("model_config.variational_dropout: ignored by {} (as in TorchEasyRec)", model_name);
  }
  if (codebook.empty()) {
    throw ConfigError(
        fmt::format("{}.codebook: must be set, one codebook size per layer, e.g. codebook: [256, 256, "
                    "256]",
                    path_));
  }
  for (int i = 0; i < codebook.size(); ++i) {
    if (codebook[i] < 1) throw ConfigError(fmt::format("{}.codebook[{}]: must be >= 1, got 0", path_, i));
    n_embed_.push_back(codebook[i]);
  }
  if (candidate_output_config != nullptr) {
    candidate_.enabled = candidate_output_config->enabled();
    candidate_.topk = candidate_output_config->topk();
    candidate_.strategy = candidate_output_config->strategy();
  }
  // Registered first, as TorchEasyRec's BaseModel creates its _loss_modules before the inputs.
  loss_modules_ = register_module("_loss_modules", torch::nn::ModuleDict());
  set_features(features);
  embedding_group_ = register_module("embedding_group", make_embedding_group());
  embeddings_.add("embedding_group", "", embedding_group_);
  const std::vector<std::string> groups = embedding_group_->group_names();
  if (groups.empty()) {
    throw ConfigError(
        fmt::format("model_config.feature_groups: {} quantizes its first DEEP feature group; add one, "
                    "e.g. feature_groups {{ group_name: \"deep\" feature_names: \"emb\" group_type: "
                    "DEEP }}",
                    model_name));
  }
  feature_group_ = groups.front();
  input_dim_ = embedding_group_->group_total_dim(feature_group_);
  if (input_dim_ < 1) {
    throw ConfigError(fmt::format("{}: feature group '{}' has total dim {}; it must be >= 1",
                                  group_path(feature_group_), feature_group_, input_dim_));
  }
}

std::map<std::string, torch::Tensor> SidModel::build_sid_input(const sparse::Batch& batch) {
  return embedding_group_->forward(batch);
}

TensorMap SidModel::sid_predictions(const nn::sid::ResidualQuantizerOutput& out) {
  TensorMap predictions{{"codes", out.cluster_ids}};
  if (out.candidate_codes.defined() && out.candidate_scores.defined()) {
    predictions["candidate_codes"] = out.candidate_codes.flatten(1);
    predictions["candidate_scores"] = out.candidate_scores;
  }
  return predictions;
}

void SidModel::init_sid_losses() {
  const auto& losses = model_config_.losses();
  if (losses.empty()) {
    throw ConfigError(
        fmt::format("model_config.losses: {} trains on its SID losses; add e.g. losses {{ recon_loss "
                    "{{}} }} losses {{ commitment_loss {{}} }}",
                    path_.substr(path_.find('.') + 1)));
  }
  for (int i = 0; i < losses.size(); ++i) {
    const protos::LossConfig& cfg = losses[i];
    const std::string path = fmt::format("model_config.losses[{}]", i);
    if (cfg.loss_case() != protos::LossConfig::LOSS_NOT_SET) {
      const auto* fd = cfg.GetReflection()->GetOneofFieldDescriptor(cfg, cfg.GetDescriptor()->FindOneofByName("loss"));
      throw ConfigError(fmt::format("{}.{}: the SID models train on recon_loss, commitment_loss and contrastive_loss",
                                    path, fd->name()));
    }
    std::string type;
    switch (cfg.sid_loss_case()) {
      case protos::LossConfig::kReconLoss:
        type = "recon_loss";
        break;
      case protos::LossConfig::kCommitmentLoss:
        type = "commitment_loss";
        break;
      case protos::LossConfig::kContrastiveLoss:
        type = "contrastive_loss";
        break;
      default:
        throw ConfigError(
            fmt::format("{}: no loss set; use recon_loss {{}}, commitment_loss {{}} or contrastive_loss "
                        "{{}}",
                        path));
    }
    for (const std::string& seen : losses_in_order_) {
      if (seen == type) throw ConfigError(fmt::format("{}.{}: configured twice", path, type));
    }
    losses_in_order_.push_back(type);
    if (type == "recon_loss") {
      recon_.emplace(loss::parse_sid_distance(cfg.recon_loss().recon_type(), path + ".recon_loss.recon_type"));
    } else if (type == "commitment_loss") {
      const auto& c = cfg.commitment_loss();
      loss::SidCommitmentLossOptions o;
      if (c.latent_weight_size() != 0 && c.latent_weight_size() != 2) {
        throw ConfigError(fmt::format("{}.commitment_loss.latent_weight: must have exactly 2 values [w1, w2], got {}",
                                      path, c.latent_weight_size()));
      }
      if (c.latent_weight_size() == 2) {
        o.w1 = c.latent_weight(0);
        o.w2 = c.latent_weight(1);
      }
      o.distance = loss::parse_sid_distance(c.commitment_type(), path + ".commitment_loss.commitment_type");
      commitment_.emplace(o);
    } else {
      contrastive_ = loss::SidContrastiveLoss();
      const std::vector<std::pair<std::string, std::shared_ptr<torch::nn::Module>>> added = {
          {"contrastive_loss", contrastive_.ptr()}};
      loss_modules_->update(added);
    }
  }
}

TensorMap SidModel::loss(const TensorMap& predictions, const sparse::Batch& batch) {
  TensorMap losses;
  for (const std::string& type : losses_in_order_) {
    if (type == "recon_loss") {
      auto mask = predictions.find("recon_mask");
      losses[type] = (*recon_)(predictions.at("x_hat"), predictions.at("recon_target"),
                               mask != predictions.end() ? mask->second : torch::Tensor());
    } else if (type == "commitment_loss") {
      losses[type] = (*commitment_)(predictions.at("encoder_out"), predictions.at("latents"));
    } else {
      // In training every rank's rows are the targets (see the header); evaluation stays local.
      std::optional<loss::RankRows> ranks;
      if (is_training() && process_group_ != nullptr && process_group_->world_size() > 1) {
        dist::ProcessGroup* pg = process_group_;
        const std::vector<torch::Tensor> sizes =
            pg->all_gather(torch::tensor({predictions.at("embed_a").size(0)}, torch::kInt64), "sid contrastive rows");
        ranks.emplace();
        for (int r = 0; r < pg->rank(); ++r) ranks->offset += sizes[static_cast<size_t>(r)].item<int64_t>();
        ranks->rows = [pg](const torch::Tensor& x) { return dist::all_gather_with_grad(*pg, x, "sid contrastive rows"); };
      }
      losses[type] =
          contrastive_->forward(predictions.at("embed_a"), predictions.at("embed_b"), predictions.at("embed_a_ori"),
                                predictions.at("embed_b_ori"), predictions.at("pair_mask"), ranks ? &*ranks : nullptr);
    }
  }
  return losses;
}

void SidModel::update_metrics(const TensorMap& predictions, const sparse::Batch& batch, const TensorMap& losses) {
  auto x_hat = predictions.find("x_hat");
  if (x_hat == predictions.end()) return;
  torch::Tensor recon = x_hat->second.detach().to(torch::kFloat32);
  torch::Tensor target = predictions.at("recon_target").detach().to(torch::kFloat32);
  auto mask = predictions.find("recon_mask");
  if (mask != predictions.end()) {
    recon = recon.index({mask->second});
    target = target.index({mask->second});
  }
  mse_.update(recon.reshape({-1}), target.reshape({-1}));
  rel_loss_.update(recon, target);
  unique_sid_ratio_.update(predictions.at("codes"));
}

std::map<std::string, double> SidModel::compute_metrics() {
  return {
      {"mse", mse_.compute()}, {"rel_loss", rel_loss_.compute()}, {"unique_sid_ratio", unique_sid_ratio_.compute()}};
}

void SidModel::sync_metrics(dist::ProcessGroup& pg) {
  mse_.sync(pg);
  rel_loss_.sync(pg);
  unique_sid_ratio_.sync(pg);
}

void SidModel::reset_metrics() {
  mse_.reset();
  rel_loss_.reset();
  unique_sid_ratio_.reset();
}

}  // namespace tzrec::models
