// Loading an export directory (export/export_dir.h) back into a model for prediction.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "export/embedding_quantization.h"
#include "train/run_config.h"
#include "train/training_session.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::exporting {

struct ExportedModel {
  protos::EasyRecConfig config;                     // dir/pipeline.config
  std::unique_ptr<train::TrainingSession> session;  // model only, single process, eval mode
  EmbeddingQuant quant = EmbeddingQuant::kFp32;     // how the tables were stored
  int64_t step = 0;                                 // of the exported checkpoint
  bool use_dense_ema = false;
  std::string tower;  // a match model's tower package: "user_tower" / "item_tower"; "" otherwise
};

// Builds the model of dir/pipeline.config and loads dir/model.safetensors into it (quantized
// tables are dequantized to the tables' dtype). The dense part runs under
// export_config.mixed_precision (export-time precision, independent of training's). Errors:
// UsageError when dir is not an export directory (names what is missing and how it is made);
// CheckpointError for a weights file of another format or that does not match the model (the
// tensor and the expected / found shape). `overrides` apply to the config as for other commands
// (e.g. --edit_config_json).
ExportedModel load_exported_model(const std::string& dir, const train::ConfigOverrides& overrides = {});

}  // namespace tzrec::exporting
