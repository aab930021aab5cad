// `tzrec feature_selection`: TorchEasyRec's `python -m tzrec.tools.feature_selection`, the same
// flags — features ranked by their learnt variational dropout ratios, and the config cut down to
// the top k of each group (train/feature_selection.h, docs/tzrec-compatibility.md §3.5).
#include <memory>

#include "cli/commands.h"
#include "train/feature_selection.h"

namespace tzrec::cli {

Action add_feature_selection_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "feature_selection",
      "Rank features by their learnt variational dropout ratios and write the config with the top k of each group");
  auto options = std::make_shared<train::FeatureSelectionOptions>();
  cmd->add_option("--pipeline_config_path", options->pipeline_config_path,
                  "pipeline config the model was trained with (model_config.variational_dropout set)")
      ->required();
  cmd->add_option("--model_dir", options->model_dir,
                  "model_dir (its latest checkpoint) or a model.ckpt-N directory (default: the config's model_dir)");
  cmd->add_option("--output_dir", options->output_dir,
                  "directory for feature_dropout_ratio_<group>.csv and the selected config")
      ->required();
  cmd->add_option("--topk", options->topk, "features kept per feature group (default 100)");
  cmd->add_flag("--visualize", options->visualize, "charts of the ratios (not supported yet: see the CSV files)");
  cmd->add_flag("--clear_variational_dropout", options->clear_variational_dropout,
                "remove model_config.variational_dropout from the selected config");
  return [options]() {
    train::run_feature_selection(*options);
    return 0;
  };
}

}  // namespace tzrec::cli
