// The export directory `tzrec export` writes and `tzrec predict --scripted_model_path` reads:
//
//   export_dir/
//     pipeline.config    the pipeline config of the model (text format)
//     model.safetensors  the model's parameters and buffers by state-dict name (as in a
//                        checkpoint's model.safetensors); dense parameters hold the EMA weights
//                        when the export used them; embedding tables stored as QUANT_EMB chose
//                        (export/embedding_quantization.h)
//     model_acc.json     {"SPARSE_INT64": "1", "QUANT_EMB": "<FP32|FP16|INT8>", plus the export
//                        switches set in the environment}, as TorchEasyRec writes it
//     version            tzrec version + newline
//     fg.json            the feature-generation config of the model's features, as TorchEasyRec's
//                        export writes it (feature/fg_json.h; feature::kFgJsonFile); left out, with
//                        a warning, while a feature type of the config has no fg.json entries
//     <asset files>      copied from --asset_files
//
// model.safetensors' "__metadata__": "format" = "tzrec-cpp export", "format_version" = "1",
// "step" and "checkpoint" (where the weights came from), "use_dense_ema" ("true" / "false"),
// "quant_emb", "tables" (JSON array of the state-dict names stored as tables), and for a tower of a
// match model "tower" ("user_tower" / "item_tower").
//
// A match model (dssm, dssm_v2, ...) is exported as TorchEasyRec does, one package per tower:
// export_dir/user and export_dir/item, each of the layout above, holding that tower's tensors
// (their names as in the whole model) and a pipeline.config reduced to the tower's feature group
// and its features; predicting with it writes "user_tower_emb" / "item_tower_emb" and reads only
// those features' columns.
//
// This is the engine's own model package: parameters plus the config that rebuilds the model.
// TorchEasyRec's TorchScript / AOTInductor packages (scripted_model.pt, aoti/) are not written.
#pragma once

namespace tzrec::exporting {

inline constexpr const char* kExportWeightsFile = "model.safetensors";
inline constexpr const char* kExportConfigFile = "pipeline.config";
inline constexpr const char* kModelAccFile = "model_acc.json";
inline constexpr const char* kExportFormat = "tzrec-cpp export";
inline constexpr const char* kExportFormatVersion = "1";

}  // namespace tzrec::exporting
