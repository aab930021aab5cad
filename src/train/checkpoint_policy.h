// keep_checkpoint_max: which model.ckpt-<step> directories survive after a save (TorchEasyRec's
// checkpoint pruning: the newest N, plus the best one by an eval metric when
// export_config.exporter_type is "best").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::train {

struct CheckpointRetention {
  int64_t keep_max = 0;          // 0 keeps everything
  bool keep_best = false;        // export_config.exporter_type == "best"
  std::string best_metric = "auc";
  bool larger_is_better = true;
};

// From train_config.keep_checkpoint_max and export_config.{exporter_type, best_exporter_metric,
// metric_larger_is_better}.
CheckpointRetention checkpoint_retention(const protos::EasyRecConfig& config);

// The step whose metric is best in a train_eval_result_v2.txt file (JSON lines
// {"global_step": S, "<metric>": v, ...}), considering only steps in `candidates`. Lines without
// the metric are skipped; ties keep the earliest line. A missing file gives nullopt; a line that
// is not a JSON object with an integer global_step → CheckpointError naming file:line.
std::optional<int64_t> best_checkpoint_step(const std::string& result_path, const std::string& metric,
                                            bool larger_is_better,
                                            const std::vector<int64_t>& candidates);

// Deletes model.ckpt-<step> directories of model_dir so that the newest `keep_max` remain, plus the
// best one (by model_dir/train_eval_result_v2.txt) when keep_best; `just_saved_step` is never
// deleted. Returns the deleted directories, oldest first. keep_max <= 0 does nothing.
std::vector<std::string> prune_checkpoints(const std::string& model_dir,
                                           const CheckpointRetention& retention,
                                           int64_t just_saved_step);

}  // namespace tzrec::train
