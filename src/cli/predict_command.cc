#include "base/logging.h"
#include "cli/commands.h"
#include "cli/unknown_flags.h"
#include "export/predictor.h"

namespace tzrec::cli {

Action add_predict_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("predict", "Write model outputs for every input row");
  auto o = std::make_shared<exporting::PredictOptions>();
  cmd->add_option("--scripted_model_path", o->scripted_model_path, "export directory written by `tzrec export`");
  cmd->add_option("--pipeline_config_path", o->pipeline_config_path,
                  "predict from a checkpoint of this config's model (takes precedence)");
  cmd->add_option("--checkpoint_path", o->checkpoint_path,
                  "with --pipeline_config_path: checkpoint dir or model_dir; default: latest in model_dir");
  cmd->add_option("--predict_input_path", o->predict_input_path, "input files (glob, comma list)")->required();
  cmd->add_option("--predict_output_path", o->predict_output_path, "output directory (part-<rank> files)")
      ->required();
  cmd->add_option("--reserved_columns", o->reserved_columns,
                  "comma list of input columns copied to the output; ALL_COLUMNS, ALL_EFFECTIVE_COLUMNS");
  cmd->add_option("--output_columns", o->output_columns, "comma list of model outputs; default all");
  cmd->add_option("--batch_size", o->batch_size, "sets data_config.batch_size and eval_batch_size");
  cmd->add_option("--predict_threads", o->predict_threads, "forward threads (the forward uses intra-op threads)");
  cmd->add_flag("--is_profiling", o->is_profiling, "write a trace under predict_output_path/predict_trace");
  cmd->add_option("--debug_level", o->debug_level, "> 0: add the __features__ column, each row's parsed features as text");
  cmd->add_option("--dataset_type", o->dataset_type, "ParquetDataset or CsvDataset; default from the config");
  cmd->add_option("--writer_type", o->writer_type, "ParquetWriter or CsvWriter; default from the dataset type");
  cmd->add_option("--edit_config_json", o->edit_config_json, "JSON edits of the pipeline config");
  cmd->add_option("--predict_steps", o->predict_steps, "stop after this many batches");
  add_local_rank_flag(cmd);
  return [cmd, o]() {
    exporting::predict(*o);
    return 0;
  };
}

}  // namespace tzrec::cli
