#include "nn/gr/output_postprocessor.h"

#include <fmt/format.h>

#include "base/error.h"
#include "nn/gr/norms.h"

namespace tzrec::nn::gr {

namespace {

class L2NormPostprocessor : public OutputPostprocessor {
 public:
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor&) override {
    return x / x.norm(2, -1, /*keepdim=*/true).clamp_min(1e-6);
  }
};

class LayerNormPostprocessor : public OutputPostprocessor {
 public:
  explicit LayerNormPostprocessor(int64_t dim) {
    norm_ = register_module("_layer_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim}).eps(1e-5)));
  }
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor&) override {
    return norm_->forward(x.to(norm_->weight.scalar_type()));
  }

 private:
  torch::nn::LayerNorm norm_{nullptr};
};

class TimestampLayerNormPostprocessor : public OutputPostprocessor {
 public:
  TimestampLayerNormPostprocessor(int64_t dim, const OutputPostprocessorOptions& o) {
    norm_ = register_module("_layer_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim}).eps(1e-5)));
    const int64_t j = static_cast<int64_t>(o.time_duration_period_units.size());
    period_units_ = register_buffer("_period_units",
                                    torch::tensor(o.time_duration_period_units, torch::kInt64).to(torch::kFloat).view({1, j}));
    units_per_period_ = register_buffer(
        "_units_per_period", torch::tensor(o.time_duration_units_per_period, torch::kInt64).to(torch::kFloat).view({1, j}));
    torch::nn::Linear combiner(dim + 2 * j, dim);
    init_linear_xavier_zero_bias(combiner);
    combiner_ = register_module("_time_feature_combiner", combiner);
  }
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& ts) override {
    auto t = ts.to(period_units_.scalar_type()).unsqueeze(-1);  // [L, 1]
    auto units = torch::div(t, period_units_, "floor");
    auto elapsed = torch::remainder(units, units_per_period_) / units_per_period_ * 2 * 3.14;  // [L, J]
    // polar(1, a) viewed as real: (cos a, sin a) per period, interleaved.
    auto trig = torch::stack({torch::cos(elapsed), torch::sin(elapsed)}, -1).flatten(-2, -1).to(x.scalar_type());
    // The layer norm in float32 (under bf16 autocast the combiner's output is bf16).
    return norm_->forward(combiner_->forward(torch::cat({x, trig}, -1)).to(norm_->weight.scalar_type()));
  }

 private:
  torch::nn::LayerNorm norm_{nullptr};
  torch::nn::Linear combiner_{nullptr};
  torch::Tensor period_units_, units_per_period_;
};

}  // namespace

std::shared_ptr<OutputPostprocessor> make_output_postprocessor(const OutputPostprocessorOptions& options,
                                                               int64_t embedding_dim, const std::string& config_path) {
  if (options.type == "l2norm_postprocessor") return std::make_shared<L2NormPostprocessor>();
  if (options.type == "layernorm_postprocessor") return std::make_shared<LayerNormPostprocessor>(embedding_dim);
  if (options.type == "timestamp_layernorm_postprocessor") {
    if (options.time_duration_period_units.size() != options.time_duration_units_per_period.size()) {
      throw ConfigError(fmt::format("{}.timestamp_layernorm_postprocessor: time_duration_period_units has {} values "
                                    "but time_duration_units_per_period {}; give one per period",
                                    config_path, options.time_duration_period_units.size(),
                                    options.time_duration_units_per_period.size()));
    }
    for (size_t i = 0; i < options.time_duration_period_units.size(); ++i) {
      if (options.time_duration_period_units[i] <= 0 || options.time_duration_units_per_period[i] <= 0) {
        throw ConfigError(fmt::format("{}.timestamp_layernorm_postprocessor: period {} must have positive "
                                      "time_duration_period_units and time_duration_units_per_period",
                                      config_path, i));
      }
    }
    return std::make_shared<TimestampLayerNormPostprocessor>(embedding_dim, options);
  }
  throw ConfigError(fmt::format("{}: set l2norm_postprocessor, layernorm_postprocessor or "
                                "timestamp_layernorm_postprocessor",
                                config_path));
}

}  // namespace tzrec::nn::gr
