// fine_tune_checkpoint: partial loading of a checkpoint into a freshly built model before
// training (TorchEasyRec's PartialLoadPlanner), with an optional parameter-name map.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "checkpoint/checkpoint.h"
#include "train/training_session.h"

namespace tzrec::train {

// Reads a fine_tune_ckpt_param_map file: one `<name in current model> <name in checkpoint>` per
// line, whitespace separated; blank lines and lines starting with '#' are ignored. A line with
// other than two fields or a current name mapped twice → ConfigError naming file:line; a missing
// file → ConfigError. Returns current name -> checkpoint name.
std::map<std::string, std::string> read_param_map(const std::string& path);

struct PartialLoadResult {
  std::vector<std::string> loaded;   // current names copied from the checkpoint
  std::vector<std::string> missing;  // current names absent from the checkpoint (left as built)
};

// Copies checkpoint tensors into `params` (current name -> live tensor) in place, looking each
// param up under param_map[name] when mapped, else under its own name. Params absent from the
// checkpoint are reported in `missing` and left untouched. A shape or dtype mismatch throws
// CheckpointError naming the parameter (and its checkpoint name) and both shapes/dtypes; nothing is
// copied unless every present param matches. A param_map key that is not a param → ConfigError.
PartialLoadResult load_partial(const std::map<std::string, torch::Tensor>& stored,
                               const std::vector<std::pair<std::string, torch::Tensor>>& params,
                               const std::map<std::string, std::string>& param_map);

struct FineTuneOptions {
  std::string checkpoint_path;  // a model.ckpt-N dir, or a model_dir (its latest checkpoint)
  std::string param_map_path;   // fine_tune_ckpt_param_map; empty = none
  bool restore_optimizer = true;  // false with --ignore_restore_optimizer
};

struct FineTuneResult {
  std::string checkpoint_dir;
  PartialLoadResult model;
  bool optimizer_restored = false;
};

// Loads the model part of the checkpoint with load_partial (one warning lists the skipped
// params), then the optimizer state when restore_optimizer, the checkpoint holds some, no name was
// remapped and it fits this session's optimizers exactly; otherwise the optimizers start fresh
// with a warning saying why. The step counter and data position are not restored (the caller
// trains from step 0). No checkpoint at the path → CheckpointError.
// A multi-rank session (a collective: every rank calls it) reads dense tensors whole and only its
// own table shards (and their sparse optimizer state) block by block, from a checkpoint written
// on any world size; the ranks restore the optimizer state all or none.
FineTuneResult fine_tune_restore(TrainingSession& session, const FineTuneOptions& options);

}  // namespace tzrec::train
