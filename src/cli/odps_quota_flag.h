// `--odps_data_quota_name`: the MaxCompute data quota TorchEasyRec's tools take for `odps://`
// tables. Those tables are not read here, so the flag is accepted (scripts that pass it keep
// working) and a warning says it changes nothing.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "base/logging.h"

namespace tzrec::cli {

inline CLI::Option* add_odps_quota_flag(CLI::App* cmd, std::string& quota) {
  return cmd->add_option("--odps_data_quota_name", quota, "MaxCompute only; no effect here");
}

inline void warn_odps_quota(const CLI::Option* quota) {
  if (quota->count() > 0) log::warning("--odps_data_quota_name is accepted and ignored: MaxCompute only");
}

}  // namespace tzrec::cli
