#include "nn/sid/residual_quantizer.h"

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::nn::sid {

ResidualQuantizerImpl::ResidualQuantizerImpl(int64_t embed_dim, std::vector<int64_t> n_embed, bool normalize_residuals,
                                             const CandidateOutputOptions& candidate, const std::string& config_path)
    : embed_dim_(embed_dim), n_embed_(std::move(n_embed)), normalize_residuals_(normalize_residuals) {
  TORCH_CHECK(!n_embed_.empty() && embed_dim_ >= 1, "residual quantizer needs layers and embed_dim >= 1");
  if (candidate.enabled) {
    const int64_t last = n_embed_.back();
    if (candidate.topk < 1 || candidate.topk > last) {
      throw ConfigError(
          fmt::format("{}.candidate_output_config.topk: must be in [1, {}] (the last codebook's "
                      "size), got {}",
                      config_path, last, candidate.topk));
    }
    if (candidate.strategy != "last_layer_knn") {
      throw ConfigError(fmt::format("{}.candidate_output_config.strategy: only \"last_layer_knn\" exists, got \"{}\"",
                                    config_path, candidate.strategy));
    }
    candidates_enabled_ = true;
    candidate_topk_ = candidate.topk;
  }
  layers_ = register_module("layers", torch::nn::ModuleList());
}

void ResidualQuantizerImpl::add_layer(std::shared_ptr<QuantizeLayerImpl> layer) {
  layers_->push_back(layer);
  quantize_layers_.push_back(std::move(layer));
}

ResidualPass ResidualQuantizerImpl::residual_pass(const torch::Tensor& input) {
  TORCH_CHECK(quantize_layers_.size() == n_embed_.size(), "residual quantizer: ", quantize_layers_.size(),
              " layers built for ", n_embed_.size());
  const bool candidates = inference_ && candidates_enabled_ && candidates_available();
  TORCH_CHECK(!(candidates && is_training()), "candidate SID output requires eval / inference mode");
  const int64_t last = n_layers() - 1;
  namespace F = torch::nn::functional;
  ResidualPass walk;
  torch::Tensor residual = input;
  torch::Tensor aggregated = torch::zeros_like(input);
  std::vector<torch::Tensor> codes;
  QuantizeOutput candidate_layer;
  for (int64_t i = 0; i <= last; ++i) {
    if (normalize_residuals_) residual = F::normalize(residual, F::NormalizeFuncOptions().dim(-1));
    const bool candidate_here = candidates && i == last;
    QuantizeOutput out =
        quantize_layers_[static_cast<size_t>(i)]->quantize(residual, candidate_here ? candidate_topk_ : 1);
    codes.push_back(out.ids);
    aggregated = aggregated + out.embeddings;
    walk.cumulative.push_back(aggregated);
    residual = residual - out.embeddings.detach();
    if (candidate_here) candidate_layer = out;
  }
  walk.cluster_ids = torch::stack(codes, -1);
  walk.aggregated = aggregated;
  if (candidate_layer.topk_ids.defined()) {
    const int64_t k = candidate_topk_;
    torch::Tensor prefix = walk.cluster_ids.narrow(1, 0, last).unsqueeze(1).expand({-1, k, -1});
    walk.candidate_codes = torch::cat({prefix, candidate_layer.topk_ids.unsqueeze(-1)}, -1);
    walk.candidate_scores = candidate_layer.topk_scores;
  }
  return walk;
}

ResidualQuantizerOutput ResidualQuantizerImpl::output(const ResidualPass& walk, const torch::Tensor& quantized,
                                                      bool with_latents) {
  ResidualQuantizerOutput out;
  out.cluster_ids = walk.cluster_ids;
  out.quantized_embeddings = quantized;
  if (with_latents) out.latents = torch::stack(walk.cumulative, 1);
  out.candidate_codes = walk.candidate_codes;
  out.candidate_scores = walk.candidate_scores;
  return out;
}

torch::Tensor ResidualQuantizerImpl::get_codes(const torch::Tensor& input) {
  torch::NoGradGuard no_grad;
  return residual_pass(input).cluster_ids;
}

torch::Tensor ResidualQuantizerImpl::decode_codes(const torch::Tensor& codes) {
  torch::NoGradGuard no_grad;
  torch::Tensor sum = quantize_layers_[0]->lookup(codes.select(1, 0));
  for (int64_t i = 1; i < n_layers(); ++i)
    sum = sum + quantize_layers_[static_cast<size_t>(i)]->lookup(codes.select(1, i));
  return sum;
}

}  // namespace tzrec::nn::sid
