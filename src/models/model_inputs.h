// Helpers shared by the Model's losses and metrics (model_losses.cc, model_metrics.cc,
// model_train_metrics.cc): reading config oneofs and per-row keys from a batch.
#pragma once

#include <string>

#include <google/protobuf/message.h>
#include <torch/torch.h>

#include "base/error.h"
#include "sparse/batch.h"

namespace tzrec::models::detail {

// Name of the field set in `oneof_name` of `msg` (e.g. "binary_cross_entropy"), "" when unset.
std::string oneof_field(const google::protobuf::Message& msg, const std::string& oneof_name);

// The first id of sparse feature `feature` per row: [B] int64 on the CPU, 0 for a row without ids
// (tzrec's to_padded_dense(1)[:, 0]); *any_empty (if given) is set when such a row exists. With
// batch.prediction_repeats, each row's id repeated that many times (one per prediction row).
// Throws DataError "<what> '<feature>' is not a sparse feature of the batch; ..." when the batch
// has no such feature.
torch::Tensor first_id_per_row(const sparse::Batch& batch, const std::string& feature, const std::string& what,
                               bool* any_empty = nullptr);

// NotSupportedError for recall_at_k at `path` (model_config.metrics[i] / train_metrics[i]): it
// needs a match model's similarity output.
[[noreturn]] void throw_recall_at_k_not_supported(const std::string& path);

// Call inside a catch block: rethrows a metric class's ConfigError ("[metrics.]<metric>.<field>:
// ...") with the config path of the metric in front; errors already naming a model_config path
// are rethrown unchanged.
[[noreturn]] void rethrow_metric_error(const ConfigError& e, const std::string& path);

}  // namespace tzrec::models::detail
