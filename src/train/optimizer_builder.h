// Conversion of the config's optimizer messages (optimizer.proto, docs/tzrec-compatibility.md §2.7)
// into the plain option structs of the fused sparse optimizers (embedding::FusedOptimizerOptions)
// and optim::DenseOptimizer.
#pragma once

#include <string>

#include "embedding/fused_row_optimizer.h"
#include "optim/dense_optimizer.h"
#include "tzrec/protos/optimizer.pb.h"

namespace tzrec::train {

// sgd / adagrad / rowwise_adagrad / adam / lamb / partial_rowwise_adam / partial_rowwise_lamb /
// lars_sgd → options (proto floats widened to double exactly as Python reads them).
// adadelta / rmsprop → tzrec::NotSupportedError("train_config.sparse_optimizer.<entry>");
// no optimizer set → tzrec::ConfigError naming "train_config.sparse_optimizer".
embedding::FusedOptimizerOptions sparse_optimizer_options(const protos::SparseOptimizer& config);

// sgd / adagrad / adam / adamw / adadelta / rmsprop → options; none set → ConfigError.
optim::DenseOptimizerOptions dense_optimizer_options(const protos::DenseOptimizer& config);
// Same for one entry of dense_optimizer.part_optimizers; `path` names it in errors, e.g.
// "train_config.dense_optimizer.part_optimizers[0]".
optim::DenseOptimizerOptions dense_optimizer_options(const protos::PartOptimizer& config,
                                                     const std::string& path);

// The base learning rate (the `lr` field of the selected optimizer message), which a
// constant_learning_rate schedule keeps for the whole run and other schedules start from.
// Errors as above.
double learning_rate(const protos::SparseOptimizer& config);
double learning_rate(const protos::DenseOptimizer& config);

}  // namespace tzrec::train
