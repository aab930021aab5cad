#include "models/mixed_precision.h"

#include "base/error.h"

namespace tzrec::models {

std::optional<c10::ScalarType> mixed_precision_dtype(const protos::EasyRecConfig& config) {
  const std::string& value = config.train_config().mixed_precision();
  if (value.empty()) return std::nullopt;
  if (value == "BF16") return c10::ScalarType::BFloat16;
  if (value == "FP16") {
    throw NotSupportedError(
        "train_config.mixed_precision: FP16 (this build trains on the CPU, where autocast computes "
        "in BF16; use \"BF16\")");
  }
  throw ConfigError(fmt::format(
      "train_config.mixed_precision: '{}' is not a precision; use \"BF16\" or \"FP16\", or leave "
      "it empty for fp32",
      value));
}

}  // namespace tzrec::models
