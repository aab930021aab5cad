#include "nn/gr/content_encoder.h"

#include <fmt/format.h>

#include "base/error.h"
#include "nn/gr/jagged.h"

namespace tzrec::nn::gr {

namespace {

class SliceContentEncoder : public ContentEncoder {
 public:
  explicit SliceContentEncoder(int64_t uih_dim) : uih_dim_(uih_dim) {}
  torch::Tensor forward(const torch::Tensor& uih, const torch::Tensor& target, const torch::Tensor& uih_offsets,
                        const torch::Tensor& target_offsets) override {
    return concat_2d_jagged(uih, target.slice(1, 0, uih_dim_), uih_offsets, target_offsets);
  }
  int64_t output_dim() const override { return uih_dim_; }

 private:
  int64_t uih_dim_;
};

class PadContentEncoder : public ContentEncoder {
 public:
  PadContentEncoder(int64_t uih_dim, int64_t target_dim) : target_dim_(target_dim) {
    enrich_ = register_parameter("_target_enrich_dummy_embeddings",
                                 torch::empty({1, target_dim - uih_dim}).normal_(0.0, 0.1));
  }
  torch::Tensor forward(const torch::Tensor& uih, const torch::Tensor& target, const torch::Tensor& uih_offsets,
                        const torch::Tensor& target_offsets) override {
    auto padded = torch::cat({uih, enrich_.to(uih.scalar_type()).expand({uih.size(0), enrich_.size(1)})}, 1);
    return concat_2d_jagged(padded, target, uih_offsets, target_offsets);
  }
  int64_t output_dim() const override { return target_dim_; }

 private:
  int64_t target_dim_;
  torch::Tensor enrich_;
};

class MLPContentEncoder : public ContentEncoder {
 public:
  MLPContentEncoder(int64_t uih_dim, int64_t target_dim, const ContentEncoderOptions& options,
                    const std::string& config_path) {
    uih_mlp_ = register_module("uih_mlp", MLP(uih_dim, options.uih_mlp, config_path + ".mlp_content_encoder.uih_mlp"));
    target_mlp_ = register_module(
        "target_mlp", MLP(target_dim, options.target_mlp, config_path + ".mlp_content_encoder.target_mlp"));
    if (uih_mlp_->output_dim() != target_mlp_->output_dim()) {
      throw ConfigError(fmt::format("{}.mlp_content_encoder: uih_mlp outputs {} values but target_mlp {}; make "
                                    "their last hidden_units equal",
                                    config_path, uih_mlp_->output_dim(), target_mlp_->output_dim()));
    }
  }
  torch::Tensor forward(const torch::Tensor& uih, const torch::Tensor& target, const torch::Tensor& uih_offsets,
                        const torch::Tensor& target_offsets) override {
    return concat_2d_jagged(uih_mlp_->forward(uih), target_mlp_->forward(target), uih_offsets, target_offsets);
  }
  int64_t output_dim() const override { return uih_mlp_->output_dim(); }

 private:
  MLP uih_mlp_{nullptr}, target_mlp_{nullptr};
};

}  // namespace

std::shared_ptr<ContentEncoder> make_content_encoder(const ContentEncoderOptions& options, int64_t uih_dim,
                                                     int64_t target_dim, const std::string& config_path) {
  if (options.type == "slice_content_encoder") {
    if (target_dim < uih_dim) {
      throw ConfigError(fmt::format("{}.slice_content_encoder: the candidate embedding ({} values) is narrower than "
                                    "the history embedding ({}); use pad_content_encoder or mlp_content_encoder",
                                    config_path, target_dim, uih_dim));
    }
    return std::make_shared<SliceContentEncoder>(uih_dim);
  }
  if (options.type == "pad_content_encoder") {
    if (target_dim <= uih_dim) {
      throw ConfigError(fmt::format("{}.pad_content_encoder: the candidate embedding ({} values) must be wider than "
                                    "the history embedding ({}); use slice_content_encoder",
                                    config_path, target_dim, uih_dim));
    }
    return std::make_shared<PadContentEncoder>(uih_dim, target_dim);
  }
  if (options.type == "mlp_content_encoder") {
    return std::make_shared<MLPContentEncoder>(uih_dim, target_dim, options, config_path);
  }
  throw ConfigError(fmt::format("{}: set one of slice_content_encoder, pad_content_encoder, mlp_content_encoder",
                                config_path));
}

}  // namespace tzrec::nn::gr
