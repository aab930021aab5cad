#include "cli/app.h"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <c10/util/Exception.h>

#include "base/error.h"
#include "base/logging.h"
#include "base/version.h"
#include "cli/commands.h"

namespace tzrec::cli {
namespace {

// Keeps a multi-line message on one line for the final error report.
std::string one_line(const std::string& message) {
  std::string out;
  for (char c : message) out += (c == '\n') ? std::string("; ") : std::string(1, c);
  return out;
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"tzrec: config-driven recommendation-model training (TorchEasyRec-compatible)", "tzrec"};
  app.set_version_flag("--version", kVersion);
  app.require_subcommand(1);
  std::vector<Action> actions = {add_train_eval_command(app), add_eval_command(app),
                                 add_export_command(app), add_predict_command(app),
                                 add_check_config_command(app), add_gen_data_command(app),
                                 add_list_checkpoint_params_command(app),
                                 add_parquet_meta_command(app), add_parquet_cat_command(app),
                                 add_launch_command(app), add_plan_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    const auto subcommands = app.get_subcommands([](CLI::App*) { return true; });
    for (size_t i = 0; i < subcommands.size(); ++i) {
      if (subcommands[i]->parsed()) return actions[i]();
    }
    return 2;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "error: %s\n", one_line(e.what()).c_str());
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", one_line(e.what()).c_str());
    return 1;
  } catch (const c10::Error& e) {
    std::fprintf(stderr, "internal error: %s\n", one_line(e.what_without_backtrace()).c_str());
    return 3;
  } catch (const std::exception& e) {
    // Programmer errors (TORCH_CHECK) still end with one line and a non-zero status.
    std::fprintf(stderr, "internal error: %s\n", one_line(e.what()).c_str());
    return 3;
  }
}

}  // namespace tzrec::cli
