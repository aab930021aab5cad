#include "datagen/label_plan.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>

#include "datagen/feature_view.h"

namespace tzrec::datagen {

namespace pb = google::protobuf;

namespace {

// The message set in model_config's `model` oneof and its field name; nullptr when none is.
const pb::Message* model_message(const protos::ModelConfig& model, std::string* name) {
  const auto* oneof = model.GetDescriptor()->FindOneofByName("model");
  if (oneof == nullptr) return nullptr;
  const auto* fd = model.GetReflection()->GetOneofFieldDescriptor(model, oneof);
  if (fd == nullptr) return nullptr;
  *name = fd->name();
  return &model.GetReflection()->GetMessage(model, fd);
}

// Label kind from a repeated LossConfig field `losses` of `m`.
LabelUse kind_from_losses(const pb::Message& m, int num_class) {
  LabelUse use;
  const auto* fd = m.GetDescriptor()->FindFieldByName("losses");
  if (fd == nullptr) return use;
  const auto* r = m.GetReflection();
  for (int i = 0; i < r->FieldSize(m, fd); ++i) {
    const auto& loss = static_cast<const protos::LossConfig&>(r->GetRepeatedMessage(m, fd, i));
    if (loss.has_l2_loss()) {
      use.kind = LabelKind::kFloat;
      return use;
    }
    if (loss.has_jrc_loss()) {
      use.kind = LabelKind::kClass;
      use.num_class = 2;
    } else if (loss.has_softmax_cross_entropy() && num_class > 1) {
      use.kind = LabelKind::kClass;
      use.num_class = num_class;
    }
  }
  return use;
}

// Calls visit(tower, index, model name) for each task tower of a multi-task model; false when the
// model has no task_towers field (a single-task model).
bool for_each_task_tower(const protos::EasyRecConfig& config,
                         const std::function<void(const pb::Message&, int, const std::string&)>& visit) {
  std::string model_name;
  const pb::Message* model = model_message(config.model_config(), &model_name);
  if (model == nullptr) return false;
  const auto* towers = model->GetDescriptor()->FindFieldByName("task_towers");
  if (towers == nullptr || !towers->is_repeated() || towers->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) {
    return false;
  }
  const auto* r = model->GetReflection();
  for (int i = 0; i < r->FieldSize(*model, towers); ++i) visit(r->GetRepeatedMessage(*model, towers, i), i, model_name);
  return true;
}

}  // namespace

std::vector<LabelUse> label_uses(const protos::EasyRecConfig& config) {
  std::vector<LabelUse> uses;
  const auto& labels = config.data_config().label_fields();
  const bool multi_task = for_each_task_tower(config, [&](const pb::Message& tower, int i, const std::string& model) {
    const int num_class = has_field(tower, "num_class") ? static_cast<int>(uint_field(tower, "num_class")) : 1;
    LabelUse use = kind_from_losses(tower, num_class);
    use.label = string_field(tower, "label_name");
    if (use.label.empty() && i < labels.size()) use.label = labels[i];
    use.source = fmt::format("model_config.{}.task_towers[{}]", model, i);
    if (!use.label.empty()) uses.push_back(use);
  });
  if (multi_task || labels.empty()) return uses;
  const auto& mc = config.model_config();
  LabelUse use = kind_from_losses(mc, static_cast<int>(mc.num_class()));
  use.label = labels[0];
  use.source = "model_config.losses";
  uses.push_back(use);
  return uses;
}

std::vector<std::string> sample_weight_columns(const protos::EasyRecConfig& config) {
  std::vector<std::string> out(config.data_config().sample_weight_fields().begin(),
                               config.data_config().sample_weight_fields().end());
  for_each_task_tower(config, [&](const pb::Message& tower, int, const std::string&) {
    const std::string name = string_field(tower, "sample_weight_name");
    if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  });
  return out;
}

}  // namespace tzrec::datagen
