// `tzrec train_eval` and `tzrec eval`: the training loop with checkpoints and evaluations.
#pragma once

#include <string>

#include "train/run_config.h"

namespace tzrec::train {

struct TrainEvalOptions {
  std::string pipeline_config_path;
  ConfigOverrides overrides;
  bool continue_train = false;
  bool ignore_restore_optimizer = false;
};

void train_and_evaluate(const TrainEvalOptions& options);

struct EvalOptions {
  std::string pipeline_config_path;
  std::string checkpoint_path;       // default: latest checkpoint in model_dir
  std::string eval_input_path;       // default: config eval_input_path
  std::string eval_result_filename = "eval_result.txt";  // written under model_dir
  std::string model_dir;             // --model_dir override
};

// Returns the metrics it wrote.
std::map<std::string, double> evaluate_checkpoint(const EvalOptions& options);

}  // namespace tzrec::train
