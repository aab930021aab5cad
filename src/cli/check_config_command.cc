#include <cstdio>

#include "cli/commands.h"
#include "config/pipeline_config.h"

namespace tzrec::cli {

Action add_check_config_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "check_config", "Load and validate a pipeline config without touching data; print every problem");
  auto path = std::make_shared<std::string>();
  auto edit = std::make_shared<std::string>();
  cmd->add_option("--pipeline_config_path", *path, "pipeline config (.config or .json)")->required();
  cmd->add_option("--edit_config_json", *edit, "JSON of config edits applied before validation");
  return [path, edit]() {
    auto config = config::load_pipeline_config(*path);
    if (!edit->empty()) config::edit_config(&config, *edit);
    const auto problems = config::validate(config);
    for (const auto& p : problems) std::printf("%s: %s\n", p.path.c_str(), p.message.c_str());
    if (!problems.empty()) {
      std::fprintf(stderr, "error: %s has %zu problem(s)\n", path->c_str(), problems.size());
      return 1;
    }
    std::printf("%s: OK\n", path->c_str());
    return 0;
  };
}

}  // namespace tzrec::cli
