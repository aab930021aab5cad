// validate(): entry point plus the data_config and train_config checks.
#include <algorithm>
#include <mutex>
#include <set>
#include <regex>
#include <cctype>

#include "base/error.h"
#include "base/logging.h"
#include "config/field_registry.h"
#include "config/validate_internal.h"

namespace tzrec::config {

namespace detail {

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
  if (data.dataset_type() != protos::CsvDataset && data.dataset_type() != protos::ParquetDataset) {
    problems->not_supported(p + ".dataset_type", protos::DatasetType_Name(data.dataset_type()));
  }
  if (data.label_fields_size() == 0) {
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
}

namespace {

using detail::oneof_set;

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

// lr field of the optimizer message set in `optimizer` oneof.
void check_lr(const google::protobuf::Message& opt, const std::string& path, Problems* problems) {
  const auto* oneof = opt.GetDescriptor()->FindOneofByName("optimizer");
  const auto* field = opt.GetReflection()->GetOneofFieldDescriptor(opt, oneof);
  if (!field) return;
  const auto& sub = opt.GetReflection()->GetMessage(opt, field);
  const auto* lr = sub.GetDescriptor()->FindFieldByName("lr");
  if (lr && sub.GetReflection()->GetFloat(sub, lr) < 0) {
    problems->add(path + "." + field->name() + ".lr", "must be >= 0");
  }
}

// Every learning_rate oneof entry is implemented (optim/lr_scheduler.h); its field values are
// checked, with their paths, when the scheduler is built (train/lr_scheduler_builder.h).
void check_learning_rate(const google::protobuf::Message& opt, const std::string& path,
                         Problems* problems) {
  if (oneof_set(opt, "learning_rate").empty()) {
    problems->add(path, "needs a learning_rate, e.g. constant_learning_rate {}");
  }
}

void check_optimizer(const google::protobuf::Message& opt, const std::string& path,
                     const std::vector<std::string>& supported, Problems* problems) {
  const std::string name = oneof_set(opt, "optimizer");
  if (name.empty()) {
    std::string list;
    for (const auto& s : supported) list += (list.empty() ? "" : ", ") + s;
    problems->add(path, "needs an optimizer, one of " + list);
  } else if (std::find(supported.begin(), supported.end(), name) == supported.end()) {
    problems->not_supported(path + "." + name);
  }
  check_lr(opt, path, problems);
  check_learning_rate(opt, path, problems);
}

}  // namespace

void validate_train(const protos::EasyRecConfig& config, Problems* problems) {
  const auto& train = config.train_config();
  const std::string p = "train_config";
  if (train.has_num_steps() == train.has_num_epochs()) {
    problems->add(p, train.has_num_steps() ? "set only one of num_steps, num_epochs"
                                           : "needs one of num_steps, num_epochs");
  }
  if (!train.has_sparse_optimizer()) {
    problems->add(p + ".sparse_optimizer", "required");
  } else {
    check_optimizer(train.sparse_optimizer(), p + ".sparse_optimizer",
                    {"sgd_optimizer", "adagrad_optimizer", "adam_optimizer", "lars_sgd_optimizer",
                     "lamb_optimizer", "partial_rowwise_lamb_optimizer",
                     "partial_rowwise_adam_optimizer", "rowwise_adagrad_optimizer"},
                    problems);
  }
  if (!train.has_dense_optimizer()) {
    problems->add(p + ".dense_optimizer", "required");
  } else {
    const auto& dense = train.dense_optimizer();
    const std::string dp = p + ".dense_optimizer";
    check_optimizer(dense, dp,
                    {"sgd_optimizer", "adagrad_optimizer", "adam_optimizer", "adamw_optimizer",
                     "adadelta_optimizer", "rmsprop_optimizer"},
                    problems);
    // part_optimizers: the learning_rate oneof may be unset (falls back to the dense one).
    for (int i = 0; i < dense.part_optimizers_size(); ++i) {
      const auto& part = dense.part_optimizers(i);
      const std::string pp = dp + ".part_optimizers[" + std::to_string(i) + "]";
      const std::string name = oneof_set(part, "optimizer");
      if (name.empty()) {
        problems->add(pp, "needs an optimizer, one of sgd_optimizer, adagrad_optimizer, "
                          "adam_optimizer, adamw_optimizer, adadelta_optimizer, rmsprop_optimizer");
      }
      check_lr(part, pp, problems);
      if (!part.has_regex_pattern()) {
        problems->add(pp + ".regex_pattern", "required (a full-match regex on parameter names "
                                             "such as model.deep_mlp.mlp.0.perceptron.0.weight)");
      } else {
        try {
          std::regex re(part.regex_pattern(), std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
          problems->add(pp + ".regex_pattern",
                        "'" + part.regex_pattern() + "' is not a valid regular expression (" +
                            e.what() + ")");
        }
      }
    }
    if (dense.has_ema() && !(dense.ema().decay() >= 0 && dense.ema().decay() <= 1)) {
      problems->add(dp + ".ema.decay", "must be in [0, 1], e.g. 0.999");
    }
  }
  if (train.mixed_precision() == "FP16") {
    // FP16 trains with the loss scaler (optim/grad_scaler.h checks the same bounds).
    const auto& gs = train.grad_scaler();
    const std::string gp = p + ".grad_scaler";
    if (!(gs.init_scale() > 0)) problems->add(gp + ".init_scale", "must be > 0, e.g. 65536");
    if (!(gs.growth_factor() > 1)) problems->add(gp + ".growth_factor", "must be > 1, e.g. 2");
    if (!(gs.backoff_factor() > 0 && gs.backoff_factor() < 1)) {
      problems->add(gp + ".backoff_factor", "must be in (0, 1), e.g. 0.5");
    }
    if (gs.growth_interval() < 1) problems->add(gp + ".growth_interval", "must be >= 1, e.g. 2000");
  } else if (!train.mixed_precision().empty() && train.mixed_precision() != "BF16") {
    problems->add(p + ".mixed_precision", "must be \"BF16\", \"FP16\" or empty, got '" +
                                              train.mixed_precision() + "'");
  }
  // tzrec upper-cases clipping_type before matching it (NORM, VALUE, NONE).
  std::string clip = train.grad_clipping().clipping_type();
  std::transform(clip.begin(), clip.end(), clip.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (clip != "none" && clip != "norm" && clip != "value") {
    problems->add(p + ".grad_clipping.clipping_type",
                  "must be norm, value or none, got '" + train.grad_clipping().clipping_type() + "'");
  }
  // TorchEasyRec's TENSORBOARD_SUMMARIES (train/training_summaries.h writes them).
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
  detail::validate_model(config, &problems);
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

namespace detail {

std::string oneof_set(const google::protobuf::Message& msg, const char* oneof_name) {
  const auto* oneof = msg.GetDescriptor()->FindOneofByName(oneof_name);
  const auto* field = msg.GetReflection()->GetOneofFieldDescriptor(msg, oneof);
  return field ? field->name() : "";
}

void required_mlp(bool has, const std::string& path, Problems* problems) {
  if (!has) problems->add(path, "required");
}

}  // namespace detail

}  // namespace tzrec::config
