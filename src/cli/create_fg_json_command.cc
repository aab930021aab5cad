// `tzrec create_fg_json`: TorchEasyRec's tzrec.tools.create_fg_json (docs/tzrec-compatibility.md
// §3.5, §5.3) — writes the fg.json of a config's features into --fg_output_dir (created when
// missing; an existing file of that name is replaced), with copies of the files the features read. Its MaxCompute flags (uploading the file as
// a resource) and --debug (reading one batch) are refused, not ignored.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"
#include "base/text.h"
#include "cli/commands.h"
#include "config/pipeline_config.h"
#include "feature/fg_json.h"

namespace tzrec::cli {
namespace {

struct CreateFgJsonFlags {
  std::string pipeline_config_path;
  std::string fg_output_dir;
  std::string reserves;
  bool remove_bucketizer = false;
  std::string fg_resource_name;
  std::string odps_project_name;
  std::string odps_schema_name;
  bool force_update_resource = false;
  bool debug = false;
};

// --reserves "label, request_id" -> {"label", "request_id"} (TorchEasyRec strips each name).
std::vector<std::string> parse_reserves(const std::string& text) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (true) {
    const size_t end = text.find(',', begin);
    const std::string name = trim(text.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
    if (name.empty()) {
      throw UsageError(fmt::format("--reserves \"{}\": column {} is empty; pass column names separated by commas, "
                                   "e.g. --reserves label,request_id",
                                   text, out.size() + 1));
    }
    out.push_back(name);
    if (end == std::string::npos) return out;
    begin = end + 1;
  }
}

void refuse_odps_flags(const CreateFgJsonFlags& f) {
  const char* upload = "uploading fg.json to MaxCompute; upload the files of --fg_output_dir as resources yourself";
  if (!f.odps_project_name.empty()) throw NotSupportedError(fmt::format("--odps_project_name ({})", upload));
  if (!f.odps_schema_name.empty()) throw NotSupportedError(fmt::format("--odps_schema_name ({})", upload));
  if (f.force_update_resource) throw NotSupportedError(fmt::format("--force_update_resource ({})", upload));
  if (f.debug) {
    throw NotSupportedError(
        "--debug (reading one batch of train_input_path); run tzrec check_config, or train_eval on the data, to "
        "check the features");
  }
}

}  // namespace

Action add_create_fg_json_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("create_fg_json",
                                 "Write the feature-generation config (fg.json) of a pipeline config's features, as "
                                 "TorchEasyRec's tzrec.tools.create_fg_json");
  auto flags = std::make_shared<CreateFgJsonFlags>();
  cmd->add_option("--pipeline_config_path", flags->pipeline_config_path, "pipeline config (.config or .json)")
      ->required();
  cmd->add_option("--fg_output_dir", flags->fg_output_dir, "directory to write fg.json into (created when missing)")
      ->required();
  auto* reserves = cmd->add_option("--reserves", flags->reserves,
                                   "comma-separated input columns the feature generator passes through, e.g. "
                                   "label,request_id (written as \"reserves\")");
  cmd->add_flag("--remove_bucketizer", flags->remove_bucketizer,
                "drop hash_bucket_size, vocab_list, vocab_dict, boundaries and num_buckets (for fg_mode "
                "FG_BUCKETIZE data)");
  cmd->add_option("--fg_resource_name", flags->fg_resource_name, "file name to write instead of fg.json");
  cmd->add_option("--odps_project_name", flags->odps_project_name, "MaxCompute upload: not supported yet");
  cmd->add_option("--odps_schema_name", flags->odps_schema_name, "MaxCompute upload: not supported yet");
  cmd->add_flag("--force_update_resource", flags->force_update_resource, "MaxCompute upload: not supported yet");
  cmd->add_flag("--debug", flags->debug, "read one batch to debug the features: not supported yet");
  return [flags, reserves]() {
    const CreateFgJsonFlags& f = *flags;
    refuse_odps_flags(f);
    const std::string file_name = f.fg_resource_name.empty() ? feature::kFgJsonFile : f.fg_resource_name;
    if (file_name == "." || file_name == ".." || file_name.find('/') != std::string::npos) {
      throw UsageError(fmt::format("--fg_resource_name \"{}\": must be a file name (no '/'), e.g. fg.json",
                                   f.fg_resource_name));
    }
    feature::FgJsonOptions options;
    options.remove_bucketizer = f.remove_bucketizer;
    if (reserves->count() > 0) options.reserves = parse_reserves(f.reserves);

    auto config = config::load_pipeline_config(f.pipeline_config_path);
    config::check_valid(config);

    namespace fs = std::filesystem;
    const fs::path dir(f.fg_output_dir);
    std::error_code ec;
    const bool existed = fs::exists(dir, ec);
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir)) {
      throw IoError(fmt::format("--fg_output_dir {}: cannot create the directory ({}); pass a writable directory",
                                f.fg_output_dir, ec ? ec.message() : "a file of that name exists"));
    }
    // The features' files (vocab files, ...) are copied next to fg.json, which names the copies.
    options.asset_dir = dir.string();
    nlohmann::ordered_json doc;
    try {
      doc = feature::create_fg_json(config, options);
    } catch (...) {
      if (!existed) fs::remove_all(dir, ec);  // a failed run leaves nothing behind
      throw;
    }
    const std::string path = (dir / file_name).string();
    feature::write_fg_json(doc, path);
    log::info("wrote {} ({} entries)", path, doc["features"].size());
    return 0;
  };
}

}  // namespace tzrec::cli
