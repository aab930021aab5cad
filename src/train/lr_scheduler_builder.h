// Config → learning-rate schedulers, gradient clipping and accumulation options
// (docs/tzrec-compatibility.md §2.5, §2.7), as TorchEasyRec's optimizer_builder.create_scheduler /
// create_part_optim_schedulers and main.py build them.
#pragma once

#include <string>

#include "optim/grad_clipping.h"
#include "optim/gradient_accumulation.h"
#include "optim/lr_scheduler.h"
#include "tzrec/protos/optimizer.pb.h"
#include "tzrec/protos/train.pb.h"

namespace tzrec::train {

// A proto float as TorchEasyRec's scheduler and optimizer classes receive it: config_to_kwargs
// runs json_format.MessageToDict, which turns a float field into the shortest decimal with at
// least 6 significant digits that reads back as the same float32 (protobuf's ToShortestFloat),
// i.e. 0.95f becomes the double 0.95, not 0.949999988079071.
double python_kwarg_float(float value);

// The learning_rate oneof of an optimizer message → schedule options (floats through
// python_kwarg_float). Unset oneof → ConfigError "<path>: needs a learning_rate, e.g.
// constant_learning_rate {}".
optim::LrScheduleOptions lr_schedule_options(const protos::SparseOptimizer& config,
                                             const std::string& path = "train_config.sparse_optimizer");
optim::LrScheduleOptions lr_schedule_options(const protos::DenseOptimizer& config,
                                             const std::string& path = "train_config.dense_optimizer");
optim::LrScheduleOptions lr_schedule_options(const protos::PartOptimizer& config,
                                             const std::string& path);

// The scheduler of the sparse / dense optimizer: base learning rate = python_kwarg_float of the
// selected optimizer's lr. Invalid schedule options → ConfigError naming the field, e.g.
// "train_config.dense_optimizer.manual_step_learning_rate: schedule_sizes and learning_rates
// differ in length (3 vs 2); ...". Unsupported optimizers → the errors of optimizer_builder.h.
optim::LrScheduler build_lr_scheduler(const protos::SparseOptimizer& config);
optim::LrScheduler build_lr_scheduler(const protos::DenseOptimizer& config);
// The scheduler of dense_optimizer.part_optimizers[index]: its own learning_rate oneof when set,
// else the dense optimizer's (as tzrec), always on the part optimizer's own lr.
optim::LrScheduler build_part_lr_scheduler(const protos::DenseOptimizer& dense, int index);

// train_config.grad_clipping: clipping_type case-insensitive ("norm"/"NORM"…, as tzrec upper-
// cases it); max_gradient and norm_type widened from float (tzrec passes the proto values
// directly, not through config_to_kwargs). No grad_clipping message or type "none" → kNone.
// enable_global_grad_clip changes nothing (config/field_registry.cc warns): tzrec passes TorchRec's
// clipping no per-parameter process groups, so it clips locally, and the dense gradients clipped
// are identical on every rank after their all-reduce (distributed_session_test.cc).
// Errors (ConfigError): unknown type, max_gradient not finite or < 0, norm type not > 0 (inf is
// allowed, "norm_type: inf" in the config).
optim::GradClippingOptions grad_clipping_options(const protos::TrainConfig& config);

// train_config.gradient_accumulation_steps (0 / 1 → off).
optim::GradientAccumulation gradient_accumulation(const protos::TrainConfig& config);

}  // namespace tzrec::train
