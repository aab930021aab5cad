// What TorchEasyRec's semantic-ID models share (BaseSidModel, tzrec/models/sid_model.py;
// docs/tzrec-compatibility.md §4.1): sid_rqvae (sid_rqvae.h) and sid_rqkmeans (sid_rqkmeans.h)
// quantize an item embedding into a semantic ID, one code per residual layer.
//
//   - Input: the model's embedding group ("embedding_group") over model_config.feature_groups;
//     the first DEEP / WIDE group is the embedding to quantize ([B, input_dim], input_dim its
//     total width).
//   - Common settings: codebook (one size per layer, ≥ 1 each), normalize_residuals,
//     candidate_output_config.
//   - No label and no task: losses and metrics are the model's own (loss(), update_metrics() and
//     the metric calls are replaced). Eval metrics: "mse" (mean squared error of the
//     reconstruction "x_hat" against "recon_target", over the rows "recon_mask" keeps when
//     present), "rel_loss" (metrics/relative_l1.h) and "unique_sid_ratio" (of "codes",
//     metrics/unique_ratio.h); a batch without "x_hat" adds nothing (NaN before any). No train
//     metrics; model_config.metrics, train_metrics, variational_dropout and
//     data_config.sample_weight_fields have no effect (warned, as TorchEasyRec ignores them).
//   - Predictions always hold "codes" [B, L] int64; in inference mode (predict) with
//     candidate_output_config enabled also "candidate_codes" [B, K · L] int64 (row-major [K, L]) and
//     "candidate_scores" [B, K] float32.
//   - Several ranks (sid_rqvae; sid_rqkmeans fits in one process, as TorchEasyRec asserts): in
//     training Sinkhorn's sums run over the ranks, rank 0's k-means initialisation is broadcast
//     (nn/sid/residual_vector_quantizer.h) and the contrastive loss targets every rank's rows
//     (loss/sid_contrastive_loss.h), as TorchEasyRec; in evaluation each rank scores its own rows
//     (the ranks' evaluation batch counts may differ, so no collective runs there).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "loss/sid_commitment_loss.h"
#include "loss/sid_contrastive_loss.h"
#include "loss/sid_recon_loss.h"
#include "metrics/regression_metrics.h"
#include "metrics/relative_l1.h"
#include "metrics/unique_ratio.h"
#include "models/model.h"
#include "nn/sid/sid_types.h"
#include "tzrec/protos/models/sid_model.pb.h"

namespace tzrec::models {

class SidModel : public Model {
 public:
  // The configured SID losses (init_sid_losses) from the predictions: "recon_loss" (x_hat,
  // recon_target, recon_mask), "commitment_loss" (encoder_out, latents), "contrastive_loss"
  // (embed_a, embed_b, embed_a_ori, embed_b_ori, pair_mask).
  TensorMap loss(const TensorMap& predictions, const sparse::Batch& batch) override;
  void update_metrics(const TensorMap& predictions, const sparse::Batch& batch, const TensorMap& losses) override;
  std::map<std::string, double> compute_metrics() override;
  void sync_metrics(dist::ProcessGroup& pg) override;
  void reset_metrics() override;

  const std::string& feature_group() const { return feature_group_; }
  int64_t input_dim() const { return input_dim_; }

 protected:
  // model_name: the oneof name ("sid_rqvae"); codebook, normalize_residuals and
  // candidate_output_config: the fields of that message. Builds the embedding group and checks
  // the common settings (ConfigError naming the field).
  // sample_weights: data_config.sample_weight_fields (no effect: warned, as TorchEasyRec ignores them).
  SidModel(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
           const std::vector<std::string>& sample_weights, const std::string& model_name,
           const google::protobuf::RepeatedField<uint32_t>& codebook,
           bool normalize_residuals, const protos::SidCandidateOutputConfig* candidate_output_config);

  // model_config.losses as TorchEasyRec's BaseSidModel.init_loss reads them: each entry sets the
  // sid_loss oneof once (recon_loss {recon_type}, commitment_loss {latent_weight: [w1, w2] or
  // unset for [1.0, 0.5], commitment_type}, contrastive_loss); the contrastive loss's
  // temperatures are "_loss_modules.contrastive_loss.*". ConfigError naming the entry for a rank
  // loss, an empty entry, a loss given twice, a bad distance or latent_weight of another length
  // than 2, and for no loss at all.
  void init_sid_losses();
  bool has_contrastive_loss() const { return static_cast<bool>(contrastive_); }

  // group name → [B, group_total_dim] (the embedding group's outputs, no dropout).
  std::map<std::string, torch::Tensor> build_sid_input(const sparse::Batch& batch);
  // "codes" and, when the output has them, "candidate_codes" (flattened) and "candidate_scores".
  static TensorMap sid_predictions(const nn::sid::ResidualQuantizerOutput& out);

  std::string path_;  // "model_config.<model_name>"
  std::vector<int64_t> n_embed_;
  bool normalize_residuals_ = false;
  nn::sid::CandidateOutputOptions candidate_;
  std::string feature_group_;
  int64_t input_dim_ = 0;

 private:
  torch::nn::ModuleDict loss_modules_{nullptr};  // "_loss_modules"
  std::vector<std::string> losses_in_order_;
  std::optional<loss::SidReconLoss> recon_;
  std::optional<loss::SidCommitmentLoss> commitment_;
  loss::SidContrastiveLoss contrastive_{nullptr};
  metrics::RegressionError mse_{metrics::RegressionError::Kind::kSquared};
  metrics::RelativeL1 rel_loss_;
  metrics::UniqueRatio unique_sid_ratio_;
};

}  // namespace tzrec::models
