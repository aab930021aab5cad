#include "base/logging.h"
#include "cli/commands.h"
#include "cli/unknown_flags.h"
#include "train/trainer.h"

namespace tzrec::cli {

Action add_train_eval_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("train_eval", "Train a model from a pipeline config, evaluating after each checkpoint");
  auto options = std::make_shared<train::TrainEvalOptions>();
  cmd->add_option("--pipeline_config_path", options->pipeline_config_path,
                  "pipeline config (.config text format or .json)")->required();
  cmd->add_option("--model_dir", options->overrides.model_dir, "overrides model_dir");
  cmd->add_option("--train_input_path", options->overrides.train_input_path, "overrides train_input_path");
  cmd->add_option("--eval_input_path", options->overrides.eval_input_path, "overrides eval_input_path");
  cmd->add_flag("--continue_train", options->continue_train,
                "resume model, optimizer, step and data position from the latest checkpoint in model_dir");
  cmd->add_option("--fine_tune_checkpoint", options->overrides.fine_tune_checkpoint,
                  "overrides train_config.fine_tune_checkpoint");
  cmd->add_option("--edit_config_json", options->overrides.edit_config_json,
                  "JSON of config edits, e.g. '{\"data_config.batch_size\":512}'");
  cmd->add_flag("--ignore_restore_optimizer", options->ignore_restore_optimizer,
                "restore only model weights when continuing or fine-tuning");
  add_local_rank_flag(cmd);
  return [cmd, options]() {
    train::train_and_evaluate(*options);
    return 0;
  };
}

}  // namespace tzrec::cli
