// `tzrec tdm_retrieval`: beam search over the TDM tree with an exported scorer and recall against
// each row's item (TorchEasyRec's tzrec/tools/tdm/retrieval.py flags; export/tdm_retrieval.h).
#include "cli/commands.h"
#include "cli/unknown_flags.h"
#include "export/tdm_retrieval.h"

namespace tzrec::cli {

Action add_tdm_retrieval_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("tdm_retrieval",
                                 "retrieve items for every input row by beam search over the TDM tree with the "
                                 "exported scorer, and report recall against each row's item");
  auto o = std::make_shared<exporting::TdmRetrievalOptions>();
  cmd->add_option("--scripted_model_path", o->scripted_model_path, "the scorer package of a tdm export (export_dir/model)");
  cmd->add_option("--predict_input_path", o->predict_input_path, "input rows (glob, comma list): users and their item");
  cmd->add_option("--predict_output_path", o->predict_output_path, "output directory (part-<rank> files)");
  cmd->add_option("--reserved_columns", o->reserved_columns, "comma list of input columns copied to the output");
  cmd->add_option("--batch_size", o->batch_size, "sets data_config.batch_size");
  cmd->add_flag("--is_profiling", o->is_profiling, "accepted; no trace is written");
  cmd->add_option("--debug_level", o->debug_level, "> 0: a warning only; tdm_retrieval writes no __features__ column, as TorchEasyRec's");
  cmd->add_option("--dataset_type", o->dataset_type, "ParquetDataset or CsvDataset; default from the config");
  cmd->add_option("--writer_type", o->writer_type, "ParquetWriter or CsvWriter; default from the dataset type");
  cmd->add_option("--recall_num", o->recall_num, "items retrieved per row")->capture_default_str();
  cmd->add_option("--n_cluster", o->n_cluster, "children per tree node, as the tree was built")->capture_default_str();
  cmd->add_option("--num_worker_per_level", o->num_worker_per_level, "accepted; levels run on one thread")
      ->capture_default_str();
  cmd->add_option("--edit_config_json", o->edit_config_json, "JSON edits of the pipeline config");
  add_local_rank_flag(cmd);
  return [o]() {
    exporting::tdm_retrieval(*o);
    return 0;
  };
}

}  // namespace tzrec::cli
