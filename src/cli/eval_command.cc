#include <cstdio>

#include "base/logging.h"
#include "cli/commands.h"
#include "cli/unknown_flags.h"
#include "train/evaluator.h"
#include "train/trainer.h"

namespace tzrec::cli {

Action add_eval_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("eval", "Evaluate a checkpoint on the eval input");
  auto options = std::make_shared<train::EvalOptions>();
  cmd->add_option("--pipeline_config_path", options->pipeline_config_path,
                  "pipeline config (.config text format or .json)")->required();
  cmd->add_option("--checkpoint_path", options->checkpoint_path,
                  "checkpoint dir (model_dir/model.ckpt-N) or a model_dir; default: latest in model_dir");
  cmd->add_option("--eval_input_path", options->eval_input_path, "overrides eval_input_path");
  cmd->add_option("--eval_result_filename", options->eval_result_filename,
                  "result file name under model_dir")->capture_default_str();
  cmd->add_option("--model_dir", options->model_dir, "overrides model_dir");
  add_local_rank_flag(cmd);
  return [cmd, options]() {
    auto metrics = train::evaluate_checkpoint(*options);
    std::printf("%s\n", train::format_metrics(metrics).c_str());
    return 0;
  };
}

}  // namespace tzrec::cli
