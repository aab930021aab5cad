#include "feature/fg_json_entry.h"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::feature {

std::string fg_default_value(const std::string& configured, bool sequence) {
  return sequence && configured.empty() ? "0" : configured;
}

nlohmann::ordered_json fg_vocab_list(const google::protobuf::RepeatedPtrField<std::string>& vocab_list,
                                     bool has_default_bucketize_value, const std::string& default_value) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  if (!has_default_bucketize_value) {
    out.push_back(default_value);
    out.push_back("<OOV>");
  }
  for (const std::string& token : vocab_list) out.push_back(token);
  return out;
}

nlohmann::ordered_json fg_vocab_dict(const google::protobuf::Map<std::string, uint64_t>& vocab_dict,
                                     bool has_default_bucketize_value, const std::string& default_value) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [token, id] : std::map<std::string, uint64_t>(vocab_dict.begin(), vocab_dict.end())) {
    out[token] = id;
  }
  if (!has_default_bucketize_value && !default_value.empty()) out[default_value] = 0;
  return out;
}

uint64_t fg_default_bucketize_value(bool has, uint64_t value) { return has ? value : 1; }

double fg_float(float value, const std::string& field_path) {
  if (!std::isfinite(value)) {
    throw ConfigError(fmt::format("{}: {} cannot be written to fg.json; use a finite number", field_path, value));
  }
  return static_cast<double>(value);
}

nlohmann::ordered_json fg_float_list(const google::protobuf::RepeatedField<float>& values,
                                     const std::string& field_path) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (int i = 0; i < values.size(); ++i) out.push_back(fg_float(values.Get(i), fmt::format("{}[{}]", field_path, i)));
  return out;
}

void add_fg_sequence_fields(const google::protobuf::RepeatedPtrField<std::string>& sequence_fields,
                            const FeatureInfo& info, nlohmann::ordered_json* entry) {
  if (info.sequence_name.empty() || sequence_fields.empty()) return;
  nlohmann::ordered_json fields = nlohmann::ordered_json::array();
  for (const std::string& f : sequence_fields) fields.push_back(f);
  (*entry)["sequence_fields"] = std::move(fields);
}

}  // namespace tzrec::feature
