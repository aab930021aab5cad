#include "base/text.h"
#include "base/error.h"
#include "base/logging.h"
#include "cli/commands.h"
#include "cli/unknown_flags.h"
#include "export/exporter.h"

namespace tzrec::cli {

Action add_export_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("export", "Export a checkpoint as a model package for predict");
  auto options = std::make_shared<exporting::ExportOptions>();
  auto assets = std::make_shared<std::string>();
  auto item_input_path = std::make_shared<std::string>();
  cmd->add_option("--pipeline_config_path", options->pipeline_config_path,
                  "pipeline config (.config text format or .json)")->required();
  cmd->add_option("--checkpoint_path", options->checkpoint_path,
                  "checkpoint dir (model_dir/model.ckpt-N) or a model_dir; default: latest in model_dir "
                  "(best with export_config.exporter_type \"best\")");
  cmd->add_option("--export_dir", options->export_dir, "directory to create (must not exist)")->required();
  cmd->add_option("--asset_files", *assets, "comma-separated files copied into export_dir");
  cmd->add_option("--additional_export_config", options->additional_export_config,
                  "JSON object merged into model_acc.json");
  cmd->add_option("--item_input_path", *item_input_path, "match models: item data for the item tower");
  add_local_rank_flag(cmd);
  return [cmd, options, assets, item_input_path]() {
    if (!item_input_path->empty()) {
      throw NotSupportedError("--item_input_path (export of match models' item towers)");
    }
    options->asset_files = split_comma_list(*assets);
    exporting::export_model(*options);
    return 0;
  };
}

}  // namespace tzrec::cli
