// `tzrec plan`: the embedding sharding plan a job of --world_size ranks would use, printed as a
// table (table, ids per sample, sharding, ranks, MB per rank, why), without allocating any table or
// training. The ids per sample of each table are measured on the first batches of
// train_input_path when it can be read (as training jobs do), else estimated.
#include <cstdio>

#include <fmt/format.h>

#include "base/error.h"
#include "cli/commands.h"
#include "dist/planner.h"
#include "train/embedding_sharding.h"
#include "train/run_config.h"

namespace tzrec::cli {
namespace {

struct PlanOptions {
  std::string pipeline_config_path;
  int world_size = 1;
  int local_world_size = 0;  // 0: all ranks on one node
  bool json = false;
  bool measure = true;
};

}  // namespace

Action add_plan_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("plan", "Print the embedding sharding plan for a number of ranks (no training)");
  auto options = std::make_shared<PlanOptions>();
  cmd->add_option("--pipeline_config_path", options->pipeline_config_path, "pipeline config")->required();
  cmd->add_option("--world_size", options->world_size, "number of ranks")->required();
  cmd->add_option("--local_world_size", options->local_world_size,
                  "ranks per node (default: world_size, one node)");
  cmd->add_flag("--json", options->json, "print the plan as JSON (the plan.json of checkpoints)");
  cmd->add_flag("!--no_measure", options->measure,
                "do not read train_input_path to measure the ids per sample of each table (use estimates)");
  return [options]() {
    if (options->world_size < 1) throw UsageError("--world_size must be at least 1");
    const int local = options->local_world_size > 0 ? options->local_world_size : options->world_size;
    if (local > options->world_size || options->world_size % local != 0) {
      throw UsageError(fmt::format("--local_world_size {} must divide --world_size {}", local, options->world_size));
    }
    train::ConfigOverrides overrides;
    overrides.require_model_dir = false;  // the plan is printed, nothing is written
    const auto config = train::load_run_config(options->pipeline_config_path, overrides);
    const train::JobPlan job = train::plan_job(config, options->world_size, local, options->measure);
    const auto& [tables, topology, plan] = job;
    const std::string text = options->json ? plan.to_json().dump(2) : dist::format_plan(plan, tables, topology);
    std::printf("%s\n", text.c_str());
    std::fflush(stdout);
    return 0;
  };
}

}  // namespace tzrec::cli
