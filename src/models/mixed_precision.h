// train_config.mixed_precision (reference §2.5): "" (fp32), "BF16" or "FP16".
#pragma once

#include <optional>

#include <c10/core/ScalarType.h>

#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::models {

// The autocast dtype for the model's dense part: nullopt for fp32, kBFloat16 for "BF16".
// "FP16" → tzrec::NotSupportedError (CPU autocast computes in bf16; fp16 with a grad scaler needs
// a CUDA build); anything else → tzrec::ConfigError naming the field.
std::optional<c10::ScalarType> mixed_precision_dtype(const protos::EasyRecConfig& config);

}  // namespace tzrec::models
