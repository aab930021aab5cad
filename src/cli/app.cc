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
#include "cli/unknown_flags.h"

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
                                 add_launch_command(app), add_plan_command(app), add_hitrate_command(app),
                                 add_tdm_init_tree_command(app), add_tdm_cluster_tree_command(app),
                                 add_tdm_retrieval_command(app),
                                 add_create_fg_json_command(app),
                                 add_zch_to_dynamicemb_convert_command(app),
                                 add_create_dynamicemb_init_ckpt_command(app),
                                 add_feature_selection_command(app), add_create_faiss_index_command(app),
                                 add_create_online_infer_data_command(app),
                                 add_add_feature_info_to_config_command(app), add_list_distcp_param_command(app),
                                 add_evaluate_sid_quality_command(app), add_resolve_sid_collisions_command(app)};
  const auto subcommands = app.get_subcommands([](CLI::App*) { return true; });
  // Unknown arguments are reported by check_flags, with a suggestion. `launch` passes everything
  // after "--" to its workers, so CLI11 itself reports its unknown flags.
  for (CLI::App* sub : subcommands) {
    if (sub->get_name() != "launch") sub->allow_extras();
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::string where;
    std::vector<std::string> names;
    for (CLI::App* sub : subcommands) {
      if (sub->parsed()) where = sub->get_name() + ": ";
      names.push_back(sub->get_name());
    }
    for (CLI::App* sub : subcommands) {
      if (!sub->parsed() || sub->remaining().empty()) continue;
      try {  // an unknown flag explains a missing one better than "X is required"
        check_flags(sub);
      } catch (const UsageError& unknown) {
        std::fprintf(stderr, "error: %s\n", one_line(unknown.what()).c_str());
        return 2;
      }
    }
    if (where.empty() && argc > 1 && argv[1][0] != '-') {
      const std::string suggestion = closest_name(names, argv[1]);
      std::fprintf(stderr, "error: tzrec: unknown command '%s'%s (see tzrec --help)\n", argv[1],
                   suggestion.empty() ? "" : ("; did you mean " + suggestion + "?").c_str());
      return 2;
    }
    std::fprintf(stderr, "error: tzrec %s%s\n", where.c_str(), one_line(e.what()).c_str());
    return 2;
  }
  try {
    for (size_t i = 0; i < subcommands.size(); ++i) {
      if (subcommands[i]->parsed()) {
        check_flags(subcommands[i]);
        return actions[i]();
      }
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
