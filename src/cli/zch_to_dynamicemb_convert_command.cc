// `tzrec zch_to_dynamicemb_convert`: TorchEasyRec's
// `python -m tzrec.tools.dynamicemb.zch_to_dynamicemb_convert`, the same flags — a checkpoint of a
// model with zch tables converted into `{save_dir}/model.ckpt-0/` of the model whose config swaps
// them for dynamicemb tables (train/zch_to_dynamicemb.h, docs/tzrec-compatibility.md §5.13).
#include <memory>

#include "cli/commands.h"
#include "train/zch_to_dynamicemb.h"

namespace tzrec::cli {

Action add_zch_to_dynamicemb_convert_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "zch_to_dynamicemb_convert",
      "Convert a checkpoint of a model with zch tables into a checkpoint of its dynamicemb twin (fine-tune from it)");
  auto options = std::make_shared<train::ZchToDynamicembOptions>();
  cmd->add_option("--source_checkpoint_path", options->source_checkpoint_path,
                  "checkpoint of the zch model (model_dir/model.ckpt-N, or a model_dir: its latest)")
      ->required();
  cmd->add_option("--source_pipeline_config_path", options->source_pipeline_config_path,
                  "pipeline config the zch model was trained with")
      ->required();
  cmd->add_option("--target_pipeline_config_path", options->target_pipeline_config_path,
                  "pipeline config with dynamicemb { } in place of zch { } (same table names and embedding_dim)")
      ->required();
  cmd->add_option("--save_dir", options->save_dir, "output directory: writes {save_dir}/model.ckpt-0/ (must not exist)")
      ->required();
  cmd->add_option("--world_size", options->world_size,
                  "ranks of the job that will load the result (default 1; the checkpoint restores on any world size)");
  return [options]() {
    train::zch_to_dynamicemb_convert(*options);
    return 0;
  };
}

}  // namespace tzrec::cli
