// Registration of each subcommand on the CLI11 app. Each returns the callback to run after parsing.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace tzrec::cli {

using Action = std::function<int()>;

Action add_train_eval_command(CLI::App& app);
Action add_eval_command(CLI::App& app);
Action add_export_command(CLI::App& app);
Action add_predict_command(CLI::App& app);
Action add_check_config_command(CLI::App& app);
Action add_gen_data_command(CLI::App& app);
Action add_list_checkpoint_params_command(CLI::App& app);
Action add_parquet_meta_command(CLI::App& app);
Action add_parquet_cat_command(CLI::App& app);
Action add_launch_command(CLI::App& app);
Action add_plan_command(CLI::App& app);
Action add_hitrate_command(CLI::App& app);
Action add_tdm_init_tree_command(CLI::App& app);
Action add_tdm_cluster_tree_command(CLI::App& app);
Action add_tdm_retrieval_command(CLI::App& app);
Action add_create_fg_json_command(CLI::App& app);
Action add_zch_to_dynamicemb_convert_command(CLI::App& app);
Action add_create_dynamicemb_init_ckpt_command(CLI::App& app);
Action add_feature_selection_command(CLI::App& app);
Action add_create_faiss_index_command(CLI::App& app);
Action add_create_online_infer_data_command(CLI::App& app);
Action add_add_feature_info_to_config_command(CLI::App& app);
Action add_list_distcp_param_command(CLI::App& app);
Action add_evaluate_sid_quality_command(CLI::App& app);
Action add_resolve_sid_collisions_command(CLI::App& app);

}  // namespace tzrec::cli
