// `tzrec create_dynamicemb_init_ckpt`: TorchEasyRec's
// `python -m tzrec.tools.dynamicemb.create_dynamicemb_init_ckpt`, the same flags — the dynamic
// tables of the features whose dynamicemb sets init_table filled from their init tables and
// written as `{save_dir}/model.ckpt-0/` for `train_eval --fine_tune_checkpoint`
// (train/dynamicemb_init_ckpt.h, docs/tzrec-compatibility.md §5.13).
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/odps_quota_flag.h"
#include "train/dynamicemb_init_ckpt.h"

namespace tzrec::cli {

Action add_create_dynamicemb_init_ckpt_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "create_dynamicemb_init_ckpt",
      "Fill dynamicemb tables from their init_table and write a checkpoint to fine-tune from");
  auto options = std::make_shared<train::DynamicembInitCkptOptions>();
  cmd->add_option("--pipeline_config_path", options->pipeline_config_path,
                  "pipeline config whose dynamicemb { init_table } features are to be initialised")
      ->required();
  cmd->add_option("--save_dir", options->save_dir,
                  "output directory: writes {save_dir}/model.ckpt-0/ (must not exist; default ./)");
  cmd->add_option("--world_size", options->world_size,
                  "ranks of the job that will load the result (default 1; the checkpoint restores on any world size)");
  cmd->add_option("--reader_worker_num", options->reader_worker_num,
                  "reader threads per init table (default: one per file, at most the cores)");
  cmd->add_option("--reader_type", options->reader_type,
                  "CsvReader or ParquetReader (default: from the file names, .csv / .txt are CSV)");
  cmd->add_option("--separator", options->separator,
                  "separator of the numbers of an embedding given as text (default ',')");
  auto quota = std::make_shared<std::string>();
  auto* quota_opt = add_odps_quota_flag(cmd, *quota);
  // quota holds what CLI11 writes when it parses: the action keeps it alive.
  return [options, quota, quota_opt]() {
    warn_odps_quota(quota_opt);
    train::create_dynamicemb_init_ckpt(*options);
    return 0;
  };
}

}  // namespace tzrec::cli
