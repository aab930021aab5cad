#include <algorithm>
#include <cstdio>
#include <sstream>

#include <fmt/format.h>

#include "base/error.h"
#include "cli/commands.h"
#include "config/pipeline_config.h"
#include "train/embedding_sharding.h"
#include "train/training_session.h"

namespace tzrec::cli {
namespace {

// The lines of a construction error as problems ("path: message" each, as validate() reports).
void add_problems(const std::string& what, std::vector<config::Problem>* problems) {
  std::istringstream lines(what);
  for (std::string line; std::getline(lines, line);) {
    const size_t colon = line.find(": ");
    if (colon == std::string::npos) {
      problems->push_back({"", line});
    } else {
      problems->push_back({line.substr(0, colon), line.substr(colon + 2)});
    }
  }
}

}  // namespace

Action add_check_config_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "check_config",
      "Load and validate a pipeline config, then build what train_eval builds before reading data "
      "(features, model, losses, metrics, optimizers, learning-rate schedules; whether the embedding "
      "tables fit one process, or the sharding plan with --world_size); print every problem");
  struct Flags {
    std::string path;
    std::string edit;
    int world_size = 0;
    int local_world_size = 0;
  };
  auto flags = std::make_shared<Flags>();
  cmd->add_option("--pipeline_config_path", flags->path, "pipeline config (.config or .json)")->required();
  cmd->add_option("--edit_config_json", flags->edit, "JSON of config edits applied before validation");
  cmd->add_option("--world_size", flags->world_size, "also plan the embedding sharding for this many ranks");
  cmd->add_option("--local_world_size", flags->local_world_size, "ranks per node (default: world_size)");
  return [flags]() {
    auto config = config::load_pipeline_config(flags->path);
    if (!flags->edit.empty()) config::edit_config(&config, flags->edit);
    auto problems = config::validate(config);
    if (problems.empty()) {
      try {
        // One process (no --world_size): its tables must fit this machine, as train_eval checks.
        train::TrainingSession::check_construction(config, std::max(1, flags->world_size));
        if (flags->world_size > 0) {
          const int local = flags->local_world_size > 0 ? flags->local_world_size : flags->world_size;
          if (local > flags->world_size || flags->world_size % local != 0) {
            throw UsageError(fmt::format("--local_world_size {} must divide --world_size {}", local,
                                         flags->world_size));
          }
          train::plan_job(config, flags->world_size, local, /*measure=*/false);
        }
      } catch (const ConfigError& e) {
        add_problems(e.what(), &problems);
      } catch (const NotSupportedError& e) {
        problems.push_back({"", e.what()});  // "not supported yet: <path>..."
      }
    }
    for (const auto& p : problems) {
      std::printf("%s%s%s\n", p.path.c_str(), p.path.empty() ? "" : ": ", p.message.c_str());
    }
    if (!problems.empty()) {
      std::fprintf(stderr, "error: %s has %zu problem(s)\n", flags->path.c_str(), problems.size());
      return 1;
    }
    std::printf("%s: OK\n", flags->path.c_str());
    return 0;
  };
}

}  // namespace tzrec::cli
