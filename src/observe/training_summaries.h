// TensorBoard summaries of parameters and gradients (train_config.tensorboard_summaries), written
// with TorchEasyRec's tags so that its dashboards read our event files unchanged.
//
// TorchEasyRec's TENSORBOARD_SUMMARIES and what each one writes every log_step_count_steps steps
// (tzrec/main.py `_log_train`); <fqn> is a parameter's TorchEasyRec name, "model.<state-dict name>":
//   loss                  scalars loss/<name>, loss/total (written by the trainer)
//   learning_rate         scalars lr/g<i> (written by the trainer)
//   parameter             histogram "<fqn>" per dense parameter; histogram "<fqn>/rank:<r>" per
//                         embedding table over this rank's local rows
//   gradient              histogram "<fqn>/gradient" per dense parameter with a gradient
//   gradient_norm         scalar "<fqn>/gradient_norm" (L2 norm of that gradient)
//   global_gradient_norm  scalar "global_gradient_norm" (L2 norm over all dense gradients)
// An empty list means ["loss", "learning_rate"]; a non-empty list always includes those two too,
// as in TorchEasyRec (its set starts from them).
//
// Embedding tables have no gradient tensors: the sparse optimizer is fused into the embedding
// backward (as TorchRec's fused tables do), so gradient / gradient_norm / global_gradient_norm
// cover the dense parameters only, exactly like TorchEasyRec, whose sharded tables are skipped
// there too. A table's "parameter" histogram covers every value of the local rows (TorchEasyRec
// logs the whole local shard as well); it costs one pass over the table per log step.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "tzrec/protos/train.pb.h"

namespace tzrec::observe {

class TensorBoardWriter;

// Prefix that turns a state-dict name into TorchEasyRec's parameter name (the model sits at
// "model" inside its TrainWrapper); the same prefix as TrainingSession's part_optimizer names.
inline constexpr const char* kSummaryFqnPrefix = "model.";

// Named tensors as the model lists them: state-dict names (without kSummaryFqnPrefix).
using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

class TrainingSummaries {
 public:
  // `writer` may be null (TensorBoard off, or a rank other than 0): then nothing is wanted and
  // every write is a no-op. Unknown summary names are rejected earlier, by config validation;
  // here they are ignored. The writer must outlive this object.
  TrainingSummaries(const protos::TrainConfig& train_config, TensorBoardWriter* writer);

  // Whether summary `name` ("loss", "parameter", ...) is to be written, with TorchEasyRec's
  // defaults (loss and learning_rate always on while there is a writer).
  bool wants(const std::string& name) const;
  // "parameter" is on: call write_parameters (and write_table_parameters) after the step.
  bool wants_parameters() const { return wants("parameter"); }
  // "gradient", "gradient_norm" or "global_gradient_norm" is on: call write_gradients while the
  // step's dense gradients are still held by the parameters.
  bool wants_gradients() const;

  // "parameter": one histogram per dense parameter, tag "<fqn>". Call with the values after the
  // optimizer step (TorchEasyRec logs after optimizer.step()).
  void write_parameters(const NamedTensors& dense_params, int64_t step);

  // "parameter" for embedding tables: one histogram per table, tag "<fqn>/rank:<rank>", over the
  // rows this rank holds (the whole table in a single process).
  void write_table_parameters(const NamedTensors& tables, int rank, int64_t step);

  // "gradient", "gradient_norm", "global_gradient_norm" from the .grad() of each dense parameter;
  // parameters without a defined gradient are skipped (and global_gradient_norm is not written
  // when none has one, as in TorchEasyRec). TorchEasyRec reads the gradients after the optimizer
  // step, i.e. as the optimizer used them: averaged over ranks and clipped.
  void write_gradients(const NamedTensors& dense_params, int64_t step);

 private:
  // Histogram of `values` (any dtype and device) under `tag`; an empty tensor or one without a
  // finite value cannot be bucketed and is skipped with a warning (logged once per tag).
  void add_histogram(const std::string& tag, const torch::Tensor& values, int64_t step);

  TensorBoardWriter* writer_;
  std::set<std::string> summaries_;
  std::set<std::string> warned_tags_;
};

}  // namespace tzrec::observe
