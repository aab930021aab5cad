#include "train/add_feature_info.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include "base/text.h"
#include "base/error.h"
#include "base/logging.h"
#include "config/feature_util.h"
#include "config/pipeline_config.h"
#include "data/table_sources.h"
#include "feature/column_cells.h"

namespace tzrec::train {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

constexpr char kCommand[] = "add_feature_info_to_config";

// A scalar text cell ("" for a null or empty one); DataError for lists and maps.
std::string text_of(const feature::ColumnCells& cells, int64_t r) {
  if (!cells.is_scalar()) {
    throw DataError(fmt::format("{}: column {} holds {}; the table's columns are text", cells.where(r), cells.name(),
                                cells.describe_type()));
  }
  if (cells.empty(r)) return "";
  const feature::CellValue v = cells.scalar(r);
  if (v.kind != feature::CellValue::Kind::kText) {
    throw DataError(fmt::format("{}: column {} holds {}; the table's columns are text", cells.where(r), cells.name(),
                                feature::display(v)));
  }
  return std::string(v.text);
}

// The number `s` spells, all of it (T: int64_t or double).
template <typename T>
bool whole_number(const std::string& s, T* out) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// An integer of feature_info (a JSON integer, or text holding one, as Python's int() takes it).
uint64_t info_integer(const nlohmann::json& info, const std::string& key, const std::string& where,
                      const std::string& feature) {
  const nlohmann::json& v = info.at(key);
  int64_t n = -1;
  if (v.is_number_integer()) {
    n = v.get<int64_t>();
  } else if (v.is_string() && !whole_number(v.get<std::string>(), &n)) {
    n = -1;
  }
  if (n < 0) {
    throw DataError(fmt::format("{}: feature {}: feature_info \"{}\" is {}; it must be a non-negative integer", where,
                                feature, key, v.dump()));
  }
  return static_cast<uint64_t>(n);
}

std::vector<float> info_boundaries(const nlohmann::json& info, const std::string& where, const std::string& feature) {
  const nlohmann::json& v = info.at("boundary");
  std::vector<float> out;
  bool ok = v.is_array();
  for (size_t i = 0; ok && i < v.size(); ++i) {
    const nlohmann::json& e = v[i];
    double d = 0;
    if (e.is_number()) {
      d = e.get<double>();
    } else if (e.is_string()) {
      ok = whole_number(e.get<std::string>(), &d);
    } else {
      ok = false;
    }
    out.push_back(static_cast<float>(d));
  }
  if (!ok) {
    throw DataError(fmt::format("{}: feature {}: feature_info \"boundary\" is {}; it must be a list of numbers", where,
                                feature, v.dump()));
  }
  return out;
}

// The field `name` of a feature's message; ConfigError naming the path when its type has none.
const FieldDescriptor* field_of(const Message& m, const std::string& name, const std::string& path,
                                const std::string& where, const std::string& feature) {
  const FieldDescriptor* f = m.GetDescriptor()->FindFieldByName(name);
  if (f == nullptr) {
    throw ConfigError(fmt::format("{}: {} has no {} but {} sets it for feature {}; fix the table's feature_info", path,
                                  m.GetDescriptor()->name(), name, where, feature));
  }
  return f;
}

// Step 2 for one feature message at `path`. Returns whether it had a row.
bool edit_feature(const FeatureInfoTable& table, const std::string& feature, const std::string& path, Message* m) {
  const auto it = table.infos.find(feature);
  if (it == table.infos.end()) {
    log::warning("{}: feature {} has no row in the feature-info table; kept as it is", path, feature);
    return false;
  }
  const auto& [info, where] = it->second;
  const auto* reflection = m->GetReflection();
  if (!info.contains("embedding_dim")) {
    throw DataError(fmt::format("{}: feature {}: feature_info has no \"embedding_dim\"", where, feature));
  }
  const uint64_t dim = info_integer(info, "embedding_dim", where, feature);
  if (dim > UINT32_MAX) {
    throw DataError(fmt::format("{}: feature {}: embedding_dim {} is too large", where, feature, dim));
  }
  reflection->SetUInt32(m, field_of(*m, "embedding_dim", path, where, feature), static_cast<uint32_t>(dim));
  if (info.contains("boundary")) {
    const std::vector<float> boundaries = info_boundaries(info, where, feature);
    const FieldDescriptor* f = field_of(*m, "boundaries", path, where, feature);
    reflection->ClearField(m, f);
    for (float b : boundaries) reflection->AddFloat(m, f, b);
  } else if (info.contains("hash_bucket_size")) {
    const uint64_t size = info_integer(info, "hash_bucket_size", where, feature);
    reflection->SetUInt64(m, field_of(*m, "hash_bucket_size", path, where, feature), size);
  }
  log::info("{}: feature {} edited", path, feature);
  return true;
}

// The field set in oneof `oneof` of `m` (nullptr when none is).
const FieldDescriptor* oneof_field(const Message& m, const char* oneof) {
  return m.GetReflection()->GetOneofFieldDescriptor(m, m.GetDescriptor()->FindOneofByName(oneof));
}

// The message set in a (Seq)FeatureConfig's oneof `feature`, or nullptr.
Message* oneof_message(Message* m) {
  const FieldDescriptor* f = oneof_field(*m, "feature");
  return f == nullptr ? nullptr : m->GetReflection()->MutableMessage(m, f);
}

std::string sub_feature_name(const Message& m) {
  const FieldDescriptor* f = m.GetDescriptor()->FindFieldByName("feature_name");
  return f == nullptr ? "" : m.GetReflection()->GetString(m, f);
}

template <typename Repeated>
void remove_names(Repeated* names, const std::set<std::string>& drops) {
  names->erase(std::remove_if(names->begin(), names->end(), [&](const std::string& n) { return drops.count(n) > 0; }),
               names->end());
}

}  // namespace

FeatureInfoTable read_feature_info_table(const std::string& path, const std::string& reader_type) {
  const std::string reader = ends_with(path, ".csv")       ? "CsvReader"
                             : ends_with(path, ".parquet") ? "ParquetReader"
                                                           : reader_type;
  data::DatasetSources table = data::open_table(data::table_format(reader, path, kCommand), path,
                                                {"feature", "feature_info", "message"}, 1024, 1, 0, 1);
  FeatureInfoTable out;
  for (auto& source : table.sources) {
    while (auto batch = source->next()) {
      const data::RecordBatch& rb = batch->records;
      const feature::ColumnCells names(rb, "feature", "the feature-info table");
      const feature::ColumnCells infos(rb, "feature_info", "the feature-info table");
      const feature::ColumnCells messages(rb, "message", "the feature-info table");
      for (int64_t r = 0; r < rb.num_rows(); ++r) {
        const std::string name = text_of(names, r);
        if (name.empty()) throw DataError(fmt::format("{}: the feature name is empty", names.where(r)));
        nlohmann::json info;
        const std::string text = text_of(infos, r);
        try {
          info = nlohmann::json::parse(text);
        } catch (const nlohmann::json::exception&) {
          info = nullptr;
        }
        if (!info.is_object()) {
          throw DataError(fmt::format("{}: feature {}: feature_info \"{}\" is not a JSON object", infos.where(r), name,
                                      text));
        }
        out.infos[name] = {std::move(info), infos.where(r)};
        if (text_of(messages, r).find("DROP IT") != std::string::npos) out.drops.insert(name);
      }
    }
  }
  return out;
}

AddFeatureInfoSummary apply_feature_info(const FeatureInfoTable& table, protos::EasyRecConfig* config) {
  AddFeatureInfoSummary summary;
  // 1. Drops.
  auto* features = config->mutable_feature_configs();
  for (int i = 0; i < features->size();) {
    protos::FeatureConfig& fc = *features->Mutable(i);
    if (fc.has_sequence_feature()) {
      auto* seq = fc.mutable_sequence_feature();
      auto* subs = seq->mutable_features();
      for (int j = 0; j < subs->size();) {
        const std::string name =
            config::grouped_sequence_name(seq->sequence_name(), sub_feature_name(*oneof_message(subs->Mutable(j))));
        if (table.drops.count(name) == 0) {
          ++j;
          continue;
        }
        log::info("drop sub sequence feature: {}", name);
        subs->erase(subs->begin() + j);
        ++summary.dropped;
      }
      if (subs->empty()) {
        log::info("drop sequence feature: {}", seq->sequence_name());
        features->erase(features->begin() + i);
        continue;
      }
    } else if (table.drops.count(config::feature_name(fc)) > 0) {
      log::info("drop feature: {}", config::feature_name(fc));
      features->erase(features->begin() + i);
      ++summary.dropped;
      continue;
    }
    ++i;
  }
  // 2. Edits.
  for (int i = 0; i < features->size(); ++i) {
    protos::FeatureConfig& fc = *features->Mutable(i);
    const std::string path = fmt::format("feature_configs[{}]", i);
    if (fc.has_sequence_feature()) {
      auto* seq = fc.mutable_sequence_feature();
      for (int j = 0; j < seq->features_size(); ++j) {
        Message* m = oneof_message(seq->mutable_features(j));
        if (m == nullptr) continue;
        const std::string name = config::grouped_sequence_name(seq->sequence_name(), sub_feature_name(*m));
        const std::string sub_path = fmt::format("{}.sequence_feature.features[{}].{}", path, j,
                                                 oneof_field(seq->features(j), "feature")->name());
        summary.edited += edit_feature(table, name, sub_path, m);
      }
      continue;
    }
    Message* m = oneof_message(&fc);
    if (m == nullptr) continue;
    summary.edited += edit_feature(table, config::feature_name(fc), path + "." + config::feature_type_name(fc), m);
  }
  // 3. Feature groups.
  for (auto& g : *config->mutable_model_config()->mutable_feature_groups()) {
    remove_names(g.mutable_feature_names(), table.drops);
    std::set<std::string> removed_groups;
    auto* seq_groups = g.mutable_sequence_groups();
    for (int k = 0; k < seq_groups->size();) {
      auto& s = *seq_groups->Mutable(k);
      remove_names(s.mutable_feature_names(), table.drops);
      if (s.feature_names_size() > 0) {
        ++k;
        continue;
      }
      log::info("drop sequence group: {}", s.group_name());
      removed_groups.insert(s.group_name());
      seq_groups->erase(seq_groups->begin() + k);
    }
    auto* encoders = g.mutable_sequence_encoders();
    for (int k = 0; k < encoders->size();) {
      const Message& encoder = encoders->Get(k);
      const FieldDescriptor* f = oneof_field(encoder, "seq_module");
      const Message* module = f == nullptr ? nullptr : &encoder.GetReflection()->GetMessage(encoder, f);
      const FieldDescriptor* input = module == nullptr ? nullptr : module->GetDescriptor()->FindFieldByName("input");
      if (input != nullptr && removed_groups.count(module->GetReflection()->GetString(*module, input)) > 0) {
        log::info("drop sequence encoder: {}", module->GetReflection()->GetString(*module, input));
        encoders->erase(encoders->begin() + k);
        continue;
      }
      ++k;
    }
    if (g.feature_names_size() == 0 && g.sequence_groups_size() == 0) {
      log::warning("feature group {} has no features left after the drops; the config will not train until it has",
                   g.group_name());
    }
  }
  return summary;
}

AddFeatureInfoSummary add_feature_info_to_config(const AddFeatureInfoOptions& options) {
  if (options.template_model_config_path.empty()) throw UsageError("--template_model_config_path is required");
  if (options.model_config_path.empty()) throw UsageError("--model_config_path is required");
  if (options.config_table_path.empty()) throw UsageError("--config_table_path is required");
  const FeatureInfoTable table = read_feature_info_table(options.config_table_path, options.reader_type);
  protos::EasyRecConfig config = config::load_pipeline_config(options.template_model_config_path);
  const AddFeatureInfoSummary summary = apply_feature_info(table, &config);
  config::save_pipeline_config(config, options.model_config_path);
  log::info("{} features edited, {} dropped; wrote {}", summary.edited, summary.dropped, options.model_config_path);
  return summary;
}

}  // namespace tzrec::train
