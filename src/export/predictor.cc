#include "export/predictor.h"

#include <filesystem>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include "base/text.h"
#include "base/error.h"
#include "base/logging.h"
#include "data/prediction_writer.h"
#include "dist/process_group.h"
#include "export/exported_model.h"
#include "feature/batch_loader.h"
#include "feature/parsed_features_text.h"
#include "models/model.h"
#include "models/model_tasks.h"
#include "checkpoint/checkpoint.h"
#include "train/run_config.h"
#include "observe/training_profiler.h"
#include "train/training_session.h"

namespace fs = std::filesystem;

namespace tzrec::exporting {
namespace {

constexpr const char* kPredictTraceDir = "predict_trace";

// The model and the config it runs with.
struct LoadedModel {
  protos::EasyRecConfig config;
  std::unique_ptr<train::TrainingSession> session;
};

LoadedModel load_model(const PredictOptions& options) {
  train::ConfigOverrides overrides;
  overrides.edit_config_json = options.edit_config_json;
  LoadedModel out;
  if (!options.pipeline_config_path.empty()) {
    out.config = train::load_run_config(options.pipeline_config_path, overrides);
    if (models::is_match_model(out.config.model_config())) {
      throw UsageError(fmt::format(
          "--pipeline_config_path: {} is a match model, which predicts its towers: run `tzrec export` and predict "
          "with --scripted_model_path <export_dir>/user or <export_dir>/item",
          options.pipeline_config_path));
    }
    const std::string where = options.checkpoint_path.empty() ? out.config.model_dir() : options.checkpoint_path;
    const auto latest = checkpointing::latest_checkpoint(where);
    if (!latest) {
      throw CheckpointError(fmt::format(
          "no checkpoint found in {}; train first, pass --checkpoint_path model_dir/model.ckpt-N, or predict from an "
          "export with --scripted_model_path", where));
    }
    out.session = std::make_unique<train::TrainingSession>(out.config, /*with_optimizers=*/false);
    out.session->restore(checkpointing::load_checkpoint(latest->first), /*restore_optimizer=*/false);
    out.session->model().eval();
    log::info("predicting with checkpoint {} (step {})", latest->first, latest->second);
    return out;
  }
  auto exported = load_exported_model(options.scripted_model_path, overrides);
  log::info("predicting with export {} (step {}, tables {}{})", options.scripted_model_path, exported.step,
            quant_name(exported.quant), exported.use_dense_ema ? ", dense EMA weights" : "");
  out.config = std::move(exported.config);
  out.session = std::move(exported.session);
  return out;
}

// Output name → selected, in the order they are written.
std::vector<std::string> select_outputs(const PredictOptions& options, const std::map<std::string, torch::Tensor>& first) {
  std::vector<std::string> available;
  for (const auto& [name, tensor] : first) {
    if (name != models::kTargetRepeatKey) available.push_back(name);  // sorted (std::map)
  }
  if (options.output_columns.empty()) return available;
  auto wanted = split_comma_list(options.output_columns);
  for (const auto& name : wanted) {
    if (first.count(name) == 0 || name == models::kTargetRepeatKey) {
      throw UsageError(fmt::format("--output_columns: the model has no output '{}'; its outputs are {}", name,
                                   fmt::join(available, ", ")));
    }
  }
  return wanted;
}

std::vector<data::OutputColumn> output_columns(const std::vector<std::string>& names,
                                               const std::map<std::string, torch::Tensor>& predictions,
                                               int64_t rows) {
  std::vector<data::OutputColumn> out;
  // A generative model's outputs per candidate: one list per row (TorchEasyRec's ListArray).
  std::vector<int64_t> row_offsets;
  auto repeats = predictions.find(models::kTargetRepeatKey);
  if (repeats != predictions.end()) {
    auto r = repeats->second.to(torch::kCPU, torch::kInt64).contiguous();
    row_offsets.assign(static_cast<size_t>(r.numel()) + 1, 0);
    for (int64_t i = 0; i < r.numel(); ++i) row_offsets[static_cast<size_t>(i) + 1] = row_offsets[i] + r.data_ptr<int64_t>()[i];
  }
  for (const auto& name : names) {
    auto t = predictions.at(name).detach().to(torch::kCPU, torch::kFloat32).contiguous();
    if (!row_offsets.empty() && (t.dim() == 1 || t.dim() == 2) && t.size(0) == row_offsets.back()) {
      data::OutputColumn column;
      column.name = name;
      column.width = t.dim() == 1 ? 1 : t.size(1);
      column.row_offsets = row_offsets;
      column.values.assign(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
      out.push_back(std::move(column));
      continue;
    }
    // [B, K, D] (MIND's user interests) is written row-major as [B, K·D].
    if (t.dim() == 3) t = t.reshape({t.size(0), -1});
    if (t.dim() == 0 || t.dim() > 2 || t.size(0) != rows) {
      throw NotSupportedError(fmt::format("prediction output '{}' of shape [{}] (outputs are written as [batch] or "
                                          "[batch, k]); leave it out with --output_columns",
                                          name, fmt::join(t.sizes().vec(), ", ")));
    }
    data::OutputColumn column;
    column.name = name;
    column.width = t.dim() == 1 ? 1 : t.size(1);
    if (predictions.at(name).scalar_type() == torch::kInt64) {  // the SID models' codes stay integers
      const torch::Tensor ids = predictions.at(name).detach().to(torch::kCPU).reshape({rows, -1}).contiguous();
      column.int64 = true;
      column.int64_values.assign(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel());
    } else {
      column.values.assign(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
    }
    out.push_back(std::move(column));
  }
  return out;
}

}  // namespace

void apply_data_flags(int64_t batch_size, const std::string& dataset_type, protos::EasyRecConfig& config) {
  auto* dc = config.mutable_data_config();
  if (batch_size > 0) {
    dc->set_batch_size(static_cast<uint32_t>(batch_size));
    dc->set_eval_batch_size(static_cast<uint32_t>(batch_size));
  } else if (batch_size < 0) {
    throw UsageError(fmt::format("--batch_size {} must be positive", batch_size));
  }
  if (!dataset_type.empty()) {
    protos::DatasetType type;
    if (!protos::DatasetType_Parse(dataset_type, &type)) {
      throw UsageError(fmt::format("--dataset_type {} is not a dataset type; use ParquetDataset or CsvDataset",
                                   dataset_type));
    }
    dc->set_dataset_type(type);
  }
}

void check_debug_level(int debug_level) {
  if (debug_level < 0) throw UsageError(fmt::format("--debug_level {} must be 0 or more", debug_level));
}

PredictSummary predict(const PredictOptions& options) {
  if (options.predict_input_path.empty()) throw UsageError("--predict_input_path is required");
  if (options.predict_output_path.empty()) throw UsageError("--predict_output_path is required");
  if (options.pipeline_config_path.empty() && options.scripted_model_path.empty()) {
    throw UsageError("pass --scripted_model_path (an export directory) or --pipeline_config_path (predict from a "
                     "checkpoint)");
  }
  check_debug_level(options.debug_level);
  if (options.predict_steps < 0) throw UsageError("--predict_steps must be positive");
  const auto env = dist::dist_env_from_environment();
  auto model = load_model(options);
  apply_data_flags(options.batch_size, options.dataset_type, model.config);
  const std::string writer_type =
      options.writer_type.empty()
          ? data::default_writer_type(protos::DatasetType_Name(model.config.data_config().dataset_type()))
          : options.writer_type;
  auto writer = data::make_prediction_writer(writer_type, options.predict_output_path, env.rank);
  if (options.predict_threads > 1) {
    log::info("--predict_threads {}: the forward runs on one thread using intra-op parallelism "
              "(OMP_NUM_THREADS) instead", options.predict_threads);
  }
  train::setup_runtime();

  feature::BatchLoader loader(model.config, options.predict_input_path, feature::Mode::kPredict, nullptr,
                              {env.rank, env.world_size}, split_comma_list(options.reserved_columns));
  observe::TrainingProfiler profiler(options.is_profiling,
                                   (fs::path(options.predict_output_path) / kPredictTraceDir).string());
  auto& net = model.session->model();
  net.set_inference(true);  // TorchEasyRec predicts in inference mode (the SID models output only their codes)
  torch::NoGradGuard no_grad;
  PredictSummary summary;
  std::vector<std::string> selected;
  while (options.predict_steps == 0 || summary.batches < options.predict_steps) {
    auto loaded = loader.next();
    if (!loaded) break;
    std::vector<data::StringColumn> appended;
    if (options.debug_level > 0) appended.push_back(feature::parsed_features_column(loader.parser().features(), loaded->batch));
    const auto predictions = net.predict(loaded->batch);
    if (summary.batches == 0) selected = select_outputs(options, predictions);
    writer->write(output_columns(selected, predictions, loaded->batch.batch_size), loaded->reserved, appended);
    ++summary.batches;
    summary.rows += loaded->batch.batch_size;
    profiler.step();
  }
  profiler.stop();
  writer->close();
  if (summary.rows > 0) summary.output_file = writer->path();
  if (summary.rows == 0) {
    log::warning("rank {}: no rows to predict in {}", env.rank, options.predict_input_path);
  } else {
    log::info("predicted {} rows in {} batches into {}", summary.rows, summary.batches, summary.output_file);
  }
  return summary;
}

}  // namespace tzrec::exporting
