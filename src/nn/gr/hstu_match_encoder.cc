#include "nn/gr/hstu_match_encoder.h"

#include <fmt/format.h>

#include "base/error.h"
#include "nn/gr/jagged.h"

namespace tzrec::nn::gr {

namespace {

const HSTUOptions& uih_only(const HSTUOptions& options, const std::string& config_path) {
  if (options.input_preprocessor.type != "uih_preprocessor") {
    throw ConfigError(fmt::format("{}.input_preprocessor: hstu_match encodes the user history alone; use "
                                  "uih_preprocessor (got {})",
                                  config_path, options.input_preprocessor.type.empty() ? "none"
                                                                                       : options.input_preprocessor.type));
  }
  return options;
}

}  // namespace

HSTUMatchEncoderImpl::HSTUMatchEncoderImpl(const HSTUOptions& options, InputPreprocessorDims dims,
                                           int64_t scaling_seqlen, const std::string& config_path,
                                           std::string query_time_key)
    : HSTUPipelineImpl(uih_only(options, config_path), std::move(dims), scaling_seqlen, config_path,
                       std::move(query_time_key)) {}

torch::Tensor HSTUMatchEncoderImpl::forward(const std::map<std::string, torch::Tensor>& grouped) {
  const Encoded e = encode(grouped);
  auto encoded = postprocessor_->forward(e.x, e.timestamps);
  auto offsets = complete_cumsum(e.lengths);
  auto last = (offsets.slice(0, 1) - 1).clamp_min(0);
  if (encoded.size(0) == 0) return torch::zeros({e.lengths.size(0), encoded.size(1)}, encoded.options());
  return encoded.index_select(0, last).masked_fill((e.lengths == 0).unsqueeze(-1), 0);
}

}  // namespace tzrec::nn::gr
