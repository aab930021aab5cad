// validate(): entry point plus the data_config and train_config checks.
#include <mutex>
#include <set>
#include <regex>

#include "base/error.h"
#include "base/logging.h"
#include "config/field_registry.h"
#include "config/stream_batches.h"
#include "config/validate_internal.h"

namespace tzrec::config {

namespace detail {

namespace {

// One warning per field and process ("input_fields[*].input_type" once for all its entries), however
// often the config is validated.
void warn_ignored_field(const std::string& path, const std::string& why) {
  static std::mutex mu;
  static std::set<std::string> warned;
  const std::string pattern = std::regex_replace(path, std::regex(R"(\[\d+\])"), "[*]");
  std::lock_guard<std::mutex> lock(mu);
  if (!warned.insert(pattern).second) return;
  log::warning("{}: accepted and ignored: {}", pattern, why);
}

}  // namespace

void validate_data(const protos::EasyRecConfig& config, Problems* problems) {
  if (!config.has_data_config()) {
    problems->add("data_config", "required");
    return;
  }
  const auto& data = config.data_config();
  const std::string p = "data_config";
  if (data.batch_size() == 0) problems->add(p + ".batch_size", "must be > 0");
  if (data.has_eval_batch_size() && data.eval_batch_size() == 0) {
    problems->add(p + ".eval_batch_size", "must be > 0");
  }
  if (data.dataset_type() != protos::CsvDataset && data.dataset_type() != protos::ParquetDataset &&
      data.dataset_type() != protos::KafkaDataset) {
    problems->not_supported(p + ".dataset_type", protos::DatasetType_Name(data.dataset_type()));
  }
  // The semantic-ID models read no label (TorchEasyRec's BaseSidModel).
  const auto model_case = config.model_config().model_case();
  const bool reads_labels =
      model_case != protos::ModelConfig::kSidRqvae && model_case != protos::ModelConfig::kSidRqkmeans;
  if (data.label_fields_size() == 0 && reads_labels) {
    problems->add(p + ".label_fields", "needs at least one label field");
  }
  for (int i = 0; i < data.label_fields_size(); ++i) {
    if (data.label_fields(i).empty()) problems->add(item_path(p, "label_fields", i), "empty name");
  }
  for (int i = 0; i < data.sample_weight_fields_size(); ++i) {
    if (data.sample_weight_fields(i).empty()) {
      problems->add(item_path(p, "sample_weight_fields", i), "empty name");
    }
  }
  if (data.dataset_type() == protos::CsvDataset) {
    if (!data.with_header() && data.input_fields_size() == 0) {
      problems->add(p + ".input_fields",
                    "CsvDataset without header (with_header: false) needs input_fields");
    }
    if (data.delimiter().empty()) problems->add(p + ".delimiter", "must not be empty");
  }
  for (int i = 0; i < data.input_fields_size(); ++i) {
    if (data.input_fields(i).input_name().empty()) {
      problems->add(item_path(p, "input_fields", i) + ".input_name", "required");
    }
  }
  // A stream keeps its order and batch_size (stream_batches.h), as TorchEasyRec's KafkaReader does.
  if (data.shuffle() && reads_a_stream(data)) {
    warn_ignored_field(p + ".shuffle",
                       "KafkaDataset trains a stream in the order it arrives (TorchEasyRec's KafkaReader ignores it too)");
  }
  if (data.batch_cost_size() > 0 && reads_a_stream(data)) {
    warn_ignored_field(p + ".batch_cost_size",
                       "KafkaDataset batches hold batch_size rows (TorchEasyRec's KafkaReader ignores it too)");
  }
  // Batches cut by cost (data/cost_batch_source.h).
  if (cuts_batches_by_cost(data)) {
    if (data.sample_cost_field().empty()) {
      problems->add(p + ".batch_cost_size", "needs data_config.sample_cost_field, the column of each row's cost");
    }
  } else if (!data.sample_cost_field().empty() && data.batch_cost_size() == 0) {
    warn_ignored_field(p + ".sample_cost_field", "only batch_cost_size reads it, and it is not set");
  }
}

// The train_config rules of what check_config does not build (the loop and its summaries); the
// optimizers, schedules, clipping, scaler, EMA and mixed precision are checked where they are built
// (train::TrainingSession, which check_config builds too).
void validate_train(const protos::EasyRecConfig& config, Problems* problems) {
  const auto& train = config.train_config();
  const std::string p = "train_config";
  if (train.has_num_steps() == train.has_num_epochs()) {
    problems->add(p, train.has_num_steps() ? "set only one of num_steps, num_epochs"
                                           : "needs one of num_steps, num_epochs");
  }
  if ((train.save_checkpoints_timestamp_interval() > 0 || train.save_checkpoints_timestamps_size() > 0) &&
      !(train.save_checkpoints_timestamp_quorum() > 0 && train.save_checkpoints_timestamp_quorum() <= 1)) {
    problems->add(p + ".save_checkpoints_timestamp_quorum",
                  fmt::format("must be in (0, 1] (the fraction of ranks whose event time must pass a "
                              "checkpoint time), got {}",
                              train.save_checkpoints_timestamp_quorum()));
  }
  // TorchEasyRec's validate_delta_embedding_dump_config (the table rules: train/delta_embedding_dump.h).
  if (train.has_delta_embedding_dump_config()) {
    const auto& dump = train.delta_embedding_dump_config();
    const std::string d = p + ".delta_embedding_dump_config";
    if (dump.has_dump_interval_minutes()) {
      if (dump.has_dump_interval_steps()) {
        problems->add(d, "set only one of dump_interval_steps and dump_interval_minutes");
      }
      if (dump.dump_interval_minutes() == 0) problems->add(d + ".dump_interval_minutes", "must be > 0");
    } else if (dump.dump_interval_steps() == 0) {
      problems->add(d + ".dump_interval_steps", "must be > 0");
    }
  }
  // TorchEasyRec's TENSORBOARD_SUMMARIES (observe/training_summaries.h writes them).
  for (int i = 0; i < train.tensorboard_summaries_size(); ++i) {
    const std::string& summary = train.tensorboard_summaries(i);
    const std::string path = p + ".tensorboard_summaries[" + std::to_string(i) + "]";
    if (summary == "loss" || summary == "learning_rate" || summary == "parameter" ||
        summary == "gradient" || summary == "gradient_norm" || summary == "global_gradient_norm") {
      continue;
    }
    problems->add(path, "unknown summary '" + summary +
                            "'; use loss, learning_rate, parameter, gradient, gradient_norm or "
                            "global_gradient_norm");
  }
}

}  // namespace detail

std::vector<Problem> validate(const protos::EasyRecConfig& config) {
  detail::Problems problems;
  for (const FieldFinding& finding : check_set_fields(config)) {
    if (finding.support == FieldSupport::kRefused) {
      problems.not_supported(finding.path);
    } else {
      detail::warn_ignored_field(finding.path, finding.why);
    }
  }
  detail::validate_data(config, &problems);
  detail::validate_train(config, &problems);
  return problems.take();
}

void check_valid(const protos::EasyRecConfig& config) {
  const std::vector<Problem> problems = validate(config);
  if (problems.empty()) return;
  std::string message;
  for (const auto& problem : problems) {
    if (!message.empty()) message += "\n";
    message += problem.path + ": " + problem.message;
  }
  throw ConfigError(message);
}

}  // namespace tzrec::config
