// `tzrec export`: a checkpoint → an export directory (export/export_dir.h), TorchEasyRec's
// tzrec.export flags and export_config semantics (docs/tzrec-compatibility.md §3.3, §8.2).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::exporting {

struct ExportOptions {
  std::string pipeline_config_path;
  std::string checkpoint_path;  // default: latest in model_dir, or best with exporter_type "best"
  std::string export_dir;       // must not exist
  std::vector<std::string> asset_files;  // copied into export_dir
  std::string additional_export_config;  // JSON object merged into model_acc.json
};

// Whether the export takes the dense EMA weights: export_config.use_dense_ema when set, else
// whether train_config.dense_optimizer.ema is configured (as eval_config.use_dense_ema).
bool use_dense_ema_for_export(const protos::EasyRecConfig& config);

// The checkpoint to export: --checkpoint_path when given (a model.ckpt-<N> directory, or a
// directory searched for its latest one); else with export_config.exporter_type "best" the
// checkpoint of model_dir whose best_exporter_metric in train_eval_result_v2.txt is best (by
// metric_larger_is_better), falling back to the latest with a warning when no kept checkpoint has
// a result; else the latest of model_dir. CheckpointError when there is none; ConfigError for an
// exporter_type other than "latest" / "best".
std::pair<std::string, int64_t> checkpoint_to_export(const protos::EasyRecConfig& config,
                                                     const std::string& checkpoint_path);

// Runs the export on rank 0 (RANK unset or 0; other ranks return at once). The directory is
// written under a temporary name next to export_dir and renamed when complete. Errors: UsageError
// when export_dir exists or an asset file is missing / two share a name; CheckpointError for an
// unusable checkpoint (or no EMA weights while use_dense_ema is on); the QUANT_EMB errors of
// export/embedding_quantization.h; UsageError when additional_export_config is not a JSON object.
// Returns the checkpoint directory exported ("" on other ranks).
std::string export_model(const ExportOptions& options);

}  // namespace tzrec::exporting
