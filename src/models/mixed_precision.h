// train_config.mixed_precision (docs/tzrec-compatibility.md §2.5): "" (fp32), "BF16" or "FP16".
#pragma once

#include <optional>
#include <string>

#include <c10/core/ScalarType.h>

#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::models {

// The mixed-precision dtype of the model's dense part, for nn::AutocastGuard: nullopt for fp32,
// kBFloat16 for "BF16" (CPU autocast), kHalf for "FP16" (on the CPU: the fp16 emulation of
// nn/fp16_emulation.h, trained with train_config.grad_scaler). Anything else → tzrec::ConfigError
// naming the field. "FP16" on a machine without CUDA logs, once per process, that it is emulated.
std::optional<c10::ScalarType> mixed_precision_dtype(const protos::EasyRecConfig& config);
// The same for a precision string read from config field `field` (e.g.
// "export_config.mixed_precision"), which the messages name.
std::optional<c10::ScalarType> mixed_precision_dtype(const std::string& value, const std::string& field);

}  // namespace tzrec::models
