#include "export/exported_model.h"

#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "export/export_dir.h"
#include "feature/assets.h"
#include "models/mixed_precision.h"
#include "checkpoint/checkpoint.h"
#include "train/remapped_shard_checkpoint.h"
#include "train/run_config.h"
#include "checkpoint/safetensors.h"

namespace fs = std::filesystem;

namespace tzrec::exporting {
namespace {

std::string metadata_value(const checkpointing::SafetensorsFile& file, const std::string& key, const std::string& path) {
  auto it = file.metadata.find(key);
  if (it == file.metadata.end()) {
    throw CheckpointError(fmt::format("{} has no \"{}\" in its __metadata__; it was not written by `tzrec export`: "
                                      "export the model again", path, key));
  }
  return it->second;
}

}  // namespace

ExportedModel load_exported_model(const std::string& dir, const train::ConfigOverrides& overrides) {
  const fs::path root(dir);
  const fs::path weights_path = root / kExportWeightsFile;
  const fs::path config_path = root / kExportConfigFile;
  if (!fs::is_directory(root) || !fs::is_regular_file(weights_path) || !fs::is_regular_file(config_path)) {
    const bool torchscript = fs::is_regular_file(root / "scripted_model.pt");
    throw UsageError(fmt::format(
        "--scripted_model_path {} is not an export directory of this engine (it needs {} and {}){}; create one "
        "with `tzrec export --pipeline_config_path ... --export_dir {}`",
        dir, kExportConfigFile, kExportWeightsFile,
        torchscript ? "; TorchScript packages (scripted_model.pt) are not supported yet" : "", dir));
  }
  ExportedModel out;
  out.config = train::load_run_config(config_path.string(), overrides);
  // The package holds the features' files (feature/assets.h), wherever it has been moved to.
  feature::rebase_asset_dirs(&out.config, fs::absolute(root).lexically_normal().string());
  auto file = checkpointing::load_safetensors(weights_path.string());
  const std::string path = weights_path.string();
  if (metadata_value(file, "format", path) != kExportFormat ||
      metadata_value(file, "format_version", path) != kExportFormatVersion) {
    throw CheckpointError(fmt::format("{}: format \"{}\" version \"{}\" is not \"{}\" version {}; export the model "
                                      "again with this tzrec",
                                      path, file.metadata["format"], file.metadata["format_version"], kExportFormat,
                                      kExportFormatVersion));
  }
  out.quant = parse_quant_emb(metadata_value(file, "quant_emb", path).c_str());
  out.step = std::stoll(metadata_value(file, "step", path));
  out.use_dense_ema = metadata_value(file, "use_dense_ema", path) == "true";
  std::set<std::string> tables;
  try {
    for (const auto& name : nlohmann::json::parse(metadata_value(file, "tables", path))) tables.insert(name.get<std::string>());
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(fmt::format("{}: __metadata__ \"tables\" is not a JSON array of names ({}); export the "
                                      "model again", path, e.what()));
  }

  if (auto it = file.metadata.find("tower"); it != file.metadata.end()) out.tower = it->second;
  out.session = std::make_unique<train::TrainingSession>(out.config, /*with_optimizers=*/false, nullptr,
                                                         std::nullopt, out.tower);
  auto params = out.session->model_tensors();
  std::map<std::string, torch::Tensor> stored;
  for (const auto& [name, param] : params) {
    auto it = file.tensors.find(name);
    if (it == file.tensors.end()) continue;  // restore_tensors names the missing one
    if (tables.count(name) == 0) {
      stored.emplace(name, it->second);
      continue;
    }
    stored.emplace(name, dequantize_table(it->second, out.quant, param.size(1), name).to(param.scalar_type()));
  }
  for (const auto& [name, tensor] : file.tensors) {
    if (stored.count(name) == 0) stored.emplace(name, tensor);  // an extra tensor: restore_tensors refuses it
  }
  // Dynamic tables hold their live rows only (exporter.cc): into this model's layout first.
  checkpointing::CheckpointData package;
  package.dir = path;
  package.model = std::move(stored);
  train::relayout_dynamic_checkpoint(out.session->model(), out.session->model().embeddings(), package, {});
  stored = std::move(package.model);
  checkpointing::restore_tensors(stored, params, "exported model");
  out.session->model().embeddings().reload_embedding_state();  // zch and dynamic tables' state

  auto& model = out.session->model();
  model.set_mixed_precision(
      models::mixed_precision_dtype(out.config.export_config().mixed_precision(), "export_config.mixed_precision"));
  model.eval();
  return out;
}

}  // namespace tzrec::exporting
