// `tzrec add_feature_info_to_config`: TorchEasyRec's `python -m
// tzrec.tools.add_feature_info_to_config`, the same flags — a config rewritten from a
// feature-analysis table (train/add_feature_info.h, docs/tzrec-compatibility.md §3.5).
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/odps_quota_flag.h"
#include "train/add_feature_info.h"

namespace tzrec::cli {

Action add_add_feature_info_to_config_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("add_feature_info_to_config",
                                 "Set embedding dims and bucketizers of a config from a feature-analysis table");
  auto options = std::make_shared<train::AddFeatureInfoOptions>();
  cmd->add_option("--template_model_config_path", options->template_model_config_path, "the config to start from")
      ->required();
  cmd->add_option("--model_config_path", options->model_config_path, "the config written")->required();
  cmd->add_option("--config_table_path", options->config_table_path,
                  "the table of feature, feature_info (JSON) and message columns: .csv (with a header) or .parquet")
      ->required();
  cmd->add_option("--reader_type", options->reader_type,
                  "CsvReader or ParquetReader for a path without a .csv / .parquet suffix (default OdpsReader: "
                  "not supported yet)");
  auto quota = std::make_shared<std::string>();
  auto* quota_opt = add_odps_quota_flag(cmd, *quota);
  // quota holds what CLI11 writes when it parses: the action keeps it alive.
  return [options, quota, quota_opt]() {
    warn_odps_quota(quota_opt);
    train::add_feature_info_to_config(*options);
    return 0;
  };
}

}  // namespace tzrec::cli
