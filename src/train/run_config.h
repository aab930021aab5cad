// Loads the pipeline config for a command and applies the command-line overrides, in the order
// TorchEasyRec applies them: file → --edit_config_json → explicit flags → validation.
#pragma once

#include <optional>
#include <string>

#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::train {

struct ConfigOverrides {
  std::string model_dir;             // --model_dir
  std::string train_input_path;      // --train_input_path
  std::string eval_input_path;       // --eval_input_path
  std::string fine_tune_checkpoint;  // --fine_tune_checkpoint
  std::string edit_config_json;      // --edit_config_json
  bool require_model_dir = true;     // false for commands that write nothing there (plan)
};

// Throws ConfigError (every validation problem, one per line) or NotSupportedError.
protos::EasyRecConfig load_run_config(const std::string& pipeline_config_path,
                                      const ConfigOverrides& overrides);

// Intra-op threads (OMP_NUM_THREADS, else all cores) and the seed (TORCH_MANUAL_SEED); checks
// TZREC_GEMM (blas/sgemm_bridge.h), UsageError when it is not a route.
void setup_runtime();

}  // namespace tzrec::train
