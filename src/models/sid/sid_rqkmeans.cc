#include "models/sid/sid_rqkmeans.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"
#include "dist/process_group.h"

namespace tzrec::models {
namespace {

// faiss's ClusteringParameters fields are C ints.
int64_t faiss_int(uint32_t value, const std::string& path) {
  if (value > static_cast<uint32_t>(std::numeric_limits<int32_t>::max())) {
    throw ConfigError(fmt::format("{}: {} does not fit faiss's int (at most 2147483647)", path, value));
  }
  return value;
}

nn::sid::KMeansOptions faiss_kmeans_options(const protos::FaissKmeansConfig& c, const std::string& path) {
  nn::sid::KMeansOptions o;  // faiss's defaults for the fields not set
  if (c.has_niter()) o.niter = faiss_int(c.niter(), path + ".niter");
  if (c.has_nredo()) {
    o.nredo = faiss_int(c.nredo(), path + ".nredo");
    if (o.nredo < 1) throw ConfigError(path + ".nredo: must be >= 1 (the number of k-means runs), got 0");
  }
  if (c.has_seed()) o.seed = faiss_int(c.seed(), path + ".seed");
  if (c.has_max_points_per_centroid()) {
    o.max_points_per_centroid = faiss_int(c.max_points_per_centroid(), path + ".max_points_per_centroid");
    if (o.max_points_per_centroid < 1) throw ConfigError(path + ".max_points_per_centroid: must be >= 1, got 0");
  }
  if (c.has_min_points_per_centroid()) {
    o.min_points_per_centroid = faiss_int(c.min_points_per_centroid(), path + ".min_points_per_centroid");
  }
  if (c.has_spherical()) o.spherical = c.spherical();
  if (c.has_verbose()) o.verbose = c.verbose();
  return o;
}

}  // namespace

SidRqkmeans::SidRqkmeans(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
                         std::vector<std::string> labels, std::vector<std::string> sample_weights)
    : SidModel(model_config, features, sample_weights, "sid_rqkmeans", model_config.sid_rqkmeans().codebook(),
               model_config.sid_rqkmeans().normalize_residuals(),
               model_config.sid_rqkmeans().has_candidate_output_config()
                   ? &model_config.sid_rqkmeans().candidate_output_config()
                   : nullptr) {
  const protos::SidRqkmeans& cfg = model_config_.sid_rqkmeans();
  const int world_size = dist::dist_env_from_environment().world_size;
  if (world_size > 1) {
    throw UsageError(
        fmt::format("{}: fits its codebook in one process (world_size 1), got WORLD_SIZE={}; launch "
                    "with --nproc-per-node=1",
                    path_, world_size));
  }
  if (!model_config_.losses().empty()) {
    log::warning(
        "model_config.losses: sid_rqkmeans trains no loss (it fits its codebook by k-means after "
        "training); the {} configured have no effect",
        model_config_.losses_size());
  }
  nn::sid::ResidualKMeansQuantizerOptions q;
  q.embed_dim = input_dim_;
  q.n_embed = n_embed_;
  q.normalize_residuals = normalize_residuals_;
  q.kmeans = faiss_kmeans_options(cfg.faiss_kmeans_kwargs(), path_ + ".faiss_kmeans_kwargs");
  q.candidate = candidate_;
  dummy_param_ = register_parameter("_dummy_param", torch::zeros({1}));
  quantizer_ = register_module("_quantizer", nn::sid::ResidualKMeansQuantizer(q, path_));
  const int64_t max_k = *std::max_element(n_embed_.begin(), n_embed_.end());
  const int64_t cap = cfg.train_sample_size() > 0 ? static_cast<int64_t>(cfg.train_sample_size())
                                                  : quantizer_->default_fit_sample_size();
  if (cap < max_k) {
    throw ConfigError(
        fmt::format("{}.train_sample_size: {} rows cannot fit the largest codebook ({}); set it to at "
                    "least {}, or 0 for max(codebook) * max_points_per_centroid",
                    path_, cap, max_k, max_k));
  }
  reservoir_ = std::make_unique<nn::sid::ReservoirSampler>(cap, input_dim_);
}

TensorMap SidRqkmeans::predict_impl(const sparse::Batch& batch) {
  const torch::Tensor embedding = build_sid_input(batch).at(feature_group_);
  if (is_training() && !is_inference()) {
    reservoir_->add(embedding);
    return {{"codes", torch::zeros({embedding.size(0), static_cast<int64_t>(n_embed_.size())},
                                   torch::dtype(torch::kInt64).device(embedding.device()))}};
  }
  quantizer_->set_inference(is_inference());
  const nn::sid::ResidualQuantizerOutput out = quantizer_->forward(embedding);
  TensorMap predictions = sid_predictions(out);
  if (!is_training() && !is_inference() && quantizer_->is_fitted()) {
    predictions["x_hat"] = out.quantized_embeddings;
    predictions["recon_target"] = embedding;
  }
  return predictions;
}

TensorMap SidRqkmeans::loss(const TensorMap& predictions, const sparse::Batch& batch) {
  return {{"dummy_loss", dummy_param_.sum() * 0.0}};
}

bool SidRqkmeans::on_train_end() {
  const torch::Tensor sample = reservoir_->sample().clone();
  reservoir_->reset();
  if (sample.size(0) == 0) {
    log::warning("sid_rqkmeans: no training rows were sampled; the codebook is not fitted");
    return false;
  }
  log::info("sid_rqkmeans: fitting the codebook by k-means on {} sampled rows (dim {})", sample.size(0),
            sample.size(1));
  try {
    quantizer_->train_offline(sample, /*verbose=*/true);
  } catch (const DataError& e) {
    throw DataError(fmt::format("sid_rqkmeans: the sampled training rows of feature group '{}': {}", feature_group_,
                                e.what()));
  }
  return true;
}

}  // namespace tzrec::models
