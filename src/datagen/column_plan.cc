#include "datagen/column_plan.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>

#include "base/error.h"
#include "config/feature_util.h"
#include "data/negative_sampler.h"
#include "datagen/feature_columns.h"
#include "datagen/feature_view.h"
#include "datagen/label_plan.h"

namespace tzrec::datagen {

namespace pb = google::protobuf;

int ColumnPlan::index_of(const std::string& name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

const ColumnSpec* ColumnPlan::find(const std::string& name) const {
  const int i = index_of(name);
  return i < 0 ? nullptr : &columns[i];
}

namespace {

class PlanSink : public ColumnSink {
 public:
  explicit PlanSink(ColumnPlan* plan) : plan_(plan) {}
  void add(ColumnSpec spec) override {
    const int i = plan_->index_of(spec.name);
    if (i < 0) {
      plan_->columns.push_back(std::move(spec));
    } else {
      merge_column(&plan_->columns[i], spec);
    }
  }

 private:
  ColumnPlan* plan_;
};

const std::string kSequencePrefix = "sequence_";

// Tags each column a feature adds with the feature's name before passing it on.
class FeatureTagSink : public ColumnSink {
 public:
  FeatureTagSink(std::string feature, ColumnSink* out) : feature_(std::move(feature)), out_(out) {}
  void add(ColumnSpec spec) override {
    if (!feature_.empty()) spec.features.push_back(feature_);
    out_->add(std::move(spec));
  }

 private:
  std::string feature_;
  ColumnSink* out_;
};

void add_feature(const protos::FeatureConfig& fc, const std::string& path, const FeatureContext& base,
                 ColumnSink* sink) {
  const std::string type = config::feature_type_name(fc);
  if (type.empty()) throw ConfigError(path + ": no feature type is set");
  FeatureContext f = base;
  f.message = config::feature_message(fc);
  f.path = path + "." + type;
  f.type = type;
  if (type.rfind(kSequencePrefix, 0) == 0 && type != "sequence_feature") {
    f.type = type.substr(kSequencePrefix.size());
    f.sequence = true;
    f.sequence_length = static_cast<int>(uint_field(*f.message, "sequence_length"));
    f.sequence_delim = string_field(*f.message, "sequence_delim");
  }
  const FeatureColumns* producer = feature_columns_for(f.type);
  if (producer == nullptr) {
    throw NotSupportedError(fmt::format("gen_data for {}", f.path));
  }
  const std::string name = string_field(*f.message, "feature_name");
  FeatureTagSink tagged(name.empty() ? name : config::grouped_sequence_name(f.sequence_name, name), sink);
  producer->add_columns(f, &tagged);
}

void add_features(const protos::EasyRecConfig& config, ColumnSink* sink) {
  FeatureContext base;
  base.fg_mode = config.data_config().fg_mode();
  base.multival_sep = config.data_config().fg_encoded_multival_sep();
  for (int i = 0; i < config.feature_configs_size(); ++i) {
    const auto& fc = config.feature_configs(i);
    const std::string path = fmt::format("feature_configs[{}]", i);
    if (!fc.has_sequence_feature()) {
      add_feature(fc, path, base, sink);
      continue;
    }
    const auto& seq = fc.sequence_feature();
    FeatureContext group = base;
    group.sequence = true;
    group.grouped = true;
    group.sequence_name = seq.sequence_name();
    group.sequence_length = static_cast<int>(seq.sequence_length());
    group.sequence_delim = seq.sequence_delim();
    if (group.sequence_name.empty()) {
      throw ConfigError(path + ".sequence_feature.sequence_name: is not set; it prefixes the "
                        "columns of the sequence");
    }
    for (int j = 0; j < seq.features_size(); ++j) {
      // SeqFeatureConfig has the FeatureConfig oneof without sequence_feature: read it through
      // the same accessors by copying it into a FeatureConfig.
      protos::FeatureConfig sub;
      sub.ParsePartialFromString(seq.features(j).SerializePartialAsString());
      add_feature(sub, fmt::format("{}.sequence_feature.features[{}]", path, j), group, sink);
    }
  }
}

void add_labels(const protos::EasyRecConfig& config, ColumnSink* sink) {
  const auto uses = label_uses(config);
  const auto& data = config.data_config();
  for (int i = 0; i < data.label_fields_size(); ++i) {
    ColumnSpec spec;
    spec.name = data.label_fields(i);
    spec.role = Role::kLabel;
    spec.sources.push_back(fmt::format("data_config.label_fields[{}]", i));
    for (const auto& use : uses) {
      if (use.label != spec.name) continue;
      spec.label_kind = use.kind;
      spec.num_class = use.num_class;
      spec.domain = use.kind == LabelKind::kFloat ? Domain::floats(0, 1) : Domain::ids(use.num_class);
      break;
    }
    if (spec.label_kind == LabelKind::kBinary) spec.domain = Domain::ids(2);
    sink->add(std::move(spec));
  }
  for (const auto& name : sample_weight_columns(config)) {
    ColumnSpec spec;
    spec.name = name;
    spec.role = Role::kSampleWeight;
    spec.domain = Domain::floats(0.5, 2.0);
    spec.sources.push_back("data_config.sample_weight_fields");
    sink->add(std::move(spec));
  }
  if (!data.sample_cost_field().empty()) {
    ColumnSpec spec;
    spec.name = data.sample_cost_field();
    spec.role = Role::kCost;
    spec.domain = Domain::ids(10);
    spec.sources.push_back("data_config.sample_cost_field");
    sink->add(std::move(spec));
  }
}

SamplerInfo sampler_info(const protos::DataConfig& data) {
  SamplerInfo info;
  const auto* oneof = data.GetDescriptor()->FindOneofByName("sampler");
  const auto* fd = oneof == nullptr ? nullptr : data.GetReflection()->GetOneofFieldDescriptor(data, oneof);
  if (fd == nullptr) return info;
  info.type = fd->name();
  info.path = "data_config." + info.type;
  const pb::Message& m = data.GetReflection()->GetMessage(data, fd);
  info.item_id_field = string_field(m, "item_id_field");
  info.user_id_field = string_field(m, "user_id_field");
  info.attr_fields = strings_field(m, "attr_fields");
  if (info.type == "tdm_sampler") {
    // The tree's own attributes (tree_level, the item id) are not item columns to generate.
    std::vector<std::string> attrs;
    for (const auto& a : info.attr_fields) {
      if (a != "tree_level" && a != info.item_id_field) attrs.push_back(a);
    }
    info.attr_fields = std::move(attrs);
  }
  info.attr_delimiter = string_field(m, "attr_delimiter");
  info.multival_sep = data::sampler_multival_sep(data);
  if (has_field(m, "field_delimiter") && !string_field(m, "field_delimiter").empty()) {
    info.field_delimiter = string_field(m, "field_delimiter");
  }
  if (info.item_id_field.empty()) {
    throw ConfigError(info.path + ".item_id_field: is not set; it names the item id column");
  }
  if (info.type != "negative_sampler" && info.type != "tdm_sampler" && info.user_id_field.empty()) {
    throw ConfigError(info.path + ".user_id_field: is not set; it names the user id column");
  }
  return info;
}

// item_id_field is the sequence column plan->columns[i]: each element is an item id, and the
// attr_fields name sub-features of the same grouped sequence (TorchEasyRec's dataset.py prefixes
// them with "<sequence_name>__" and flattens the candidates before sampling).
void mark_sequence_item_ids(ColumnPlan* plan, int i) {
  SamplerInfo& s = plan->sampler;
  ColumnSpec& spec = plan->columns[static_cast<size_t>(i)];
  const std::string prefix = config::grouped_sequence_prefix(spec.sequence_group);
  if (spec.role != Role::kInput || spec.domain.kind != Domain::Kind::kIds || s.type == "tdm_sampler") {
    throw ConfigError(fmt::format("{}.item_id_field: column '{}' holds {}, but the sampler tables need "
                                  "integer ids (id:int64)",
                                  s.path, spec.name, describe(spec)));
  }
  if (spec.name.rfind(prefix, 0) != 0) {
    throw ConfigError(fmt::format("{}.item_id_field: column '{}' is the input of a sequence feature that "
                                  "is not a grouped sequence_feature; only sub-features of a grouped "
                                  "sequence_feature can be the item id (as in TorchEasyRec)",
                                  s.path, spec.name));
  }
  spec.layout = Layout::kScalar;  // one item id per element
  spec.min_values = spec.max_values = 1;
  spec.item_id = true;
  s.sequence_prefix = prefix;
  for (auto& name : s.attr_fields) name = prefix + name;
}

void mark_sampler_columns(ColumnPlan* plan) {
  SamplerInfo& s = plan->sampler;
  if (s.type.empty()) return;
  auto require_ids = [&](const std::string& name, const std::string& field) -> ColumnSpec& {
    const int i = plan->index_of(name);
    if (i < 0) {
      ColumnSpec spec;
      spec.name = name;
      spec.domain = Domain::ids(kHashedIdCardinality, true);
      spec.sources.push_back(s.path + "." + field);
      plan->columns.push_back(std::move(spec));
      return plan->columns.back();
    }
    ColumnSpec& spec = plan->columns[i];
    if (spec.role != Role::kInput || spec.sequence || spec.domain.kind != Domain::Kind::kIds ||
        (spec.layout != Layout::kScalar && spec.layout != Layout::kList)) {
      throw ConfigError(fmt::format("{}.{}: column '{}' holds {}, but the sampler tables need "
                                    "integer ids (id:int64)",
                                    s.path, field, name, describe(spec)));
    }
    spec.layout = Layout::kScalar;
    spec.min_values = spec.max_values = 1;
    return spec;
  };
  const int item_column = plan->index_of(s.item_id_field);
  if (item_column >= 0 && plan->columns[static_cast<size_t>(item_column)].sequence) {
    mark_sequence_item_ids(plan, item_column);
  } else {
    require_ids(s.item_id_field, "item_id_field").item_id = true;
  }
  if (!s.user_id_field.empty()) require_ids(s.user_id_field, "user_id_field").user_id = true;
  const std::string item_group =
      s.sequence_prefix.empty() ? std::string() : plan->find(s.item_id_field)->sequence_group;
  for (size_t k = 0; k < s.attr_fields.size(); ++k) {
    const std::string& name = s.attr_fields[k];
    const int i = plan->index_of(name);
    if (i < 0) {
      throw ConfigError(fmt::format("{}.attr_fields[{}]: '{}' is not an input column of any "
                                    "feature; list the columns of the item features",
                                    s.path, k, name));
    }
    ColumnSpec& spec = plan->columns[i];
    if (item_group.empty() ? (spec.role != Role::kInput || spec.sequence)
                           : (spec.role != Role::kInput || !spec.sequence || spec.sequence_group != item_group)) {
      throw ConfigError(fmt::format("{}.attr_fields[{}]: column '{}' holds {}, which is not an item "
                                    "attribute{}",
                                    s.path, k, name, describe(spec),
                                    item_group.empty() ? ""
                                                       : fmt::format(" of the items of sequence '{}' (the "
                                                                     "sequence of item_id_field '{}')",
                                                                     item_group, s.item_id_field)));
    }
    if (spec.user_id) {
      throw ConfigError(fmt::format("{}.attr_fields[{}]: '{}' is the user id column", s.path, k, name));
    }
    // One value per attribute (per element of a sequence), so that its text in the item table is
    // a single token.
    if (spec.sequence) {
      spec.layout = Layout::kScalar;
      spec.min_values = spec.max_values = 1;
    } else if (spec.layout == Layout::kList && !(spec.min_values == spec.max_values && spec.min_values > 1)) {
      spec.layout = Layout::kScalar;
      spec.min_values = spec.max_values = 1;
    }
    spec.item_attr = true;
  }
}

}  // namespace

ColumnPlan plan_columns(const protos::EasyRecConfig& config) {
  const auto& data = config.data_config();
  ColumnPlan plan;
  plan.sampler = sampler_info(data);
  PlanSink sink(&plan);
  add_features(config, &sink);
  add_labels(config, &sink);
  mark_sampler_columns(&plan);
  plan.generative = plan_generative_layout(config, &plan.columns);
  bool has_input = false;
  for (const auto& c : plan.columns) has_input = has_input || c.role == Role::kInput;
  if (!has_input) {
    throw ConfigError("feature_configs: the config has no features, so gen_data has no input "
                      "columns to write");
  }
  return plan;
}

}  // namespace tzrec::datagen
