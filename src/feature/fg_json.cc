#include "feature/fg_json.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string_view>

#include <c10/util/Exception.h>
#include <fmt/format.h>

#include "base/error.h"
#include "base/python_float.h"
#include "feature/assets.h"
#include "data/file_output.h"
#include "feature/feature_registry.h"

namespace tzrec::feature {
namespace {

// The bucketizer keys remove_bucketizer drops (TorchEasyRec's _remove_one_feature_bucketizer; a
// tokenize_feature keeps its vocab_file, the tokenizer's vocabulary).
void remove_bucketizer(nlohmann::ordered_json* entry) {
  for (const char* key : {"hash_bucket_size", "vocab_dict", "vocab_list", "boundaries", "num_buckets"}) {
    entry->erase(key);
  }
  if (entry->value("feature_type", "") != "tokenize_feature") entry->erase("vocab_file");
}

// ---- Python's json.dump(doc, f, indent=4) ---------------------------------------------------------

// Python's repr of a finite float (base/python_float.h).
void append_python_float(double v, std::string* out) {
  TORCH_CHECK(std::isfinite(v), "fg.json: non-finite number");
  *out += python_float_repr(v);
}

// A JSON string as Python writes it with ensure_ascii: \" \\ \b \f \n \r \t, other characters
// outside ' '..'~' as \uXXXX (UTF-16 surrogate pairs above U+FFFF). ConfigError for text that is
// not UTF-8.
void append_python_string(const std::string& s, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    const auto lead = static_cast<unsigned char>(s[i]);
    const size_t len = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xe ? 3 : (lead >> 3) == 0x1e ? 4 : 0;
    uint32_t cp = len == 1 ? lead : len == 2 ? (lead & 0x1f) : len == 3 ? (lead & 0x0f) : (lead & 0x07);
    bool valid = len > 0 && i + len <= s.size();
    for (size_t j = 1; valid && j < len; ++j) {
      const auto c = static_cast<unsigned char>(s[i + j]);
      valid = (c >> 6) == 0x2;
      cp = (cp << 6) | (c & 0x3f);
    }
    const uint32_t least = len == 2 ? 0x80 : len == 3 ? 0x800 : len == 4 ? 0x10000 : 0;  // no overlong forms
    if (!valid || cp < least || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      throw ConfigError(fmt::format("fg.json: the config string \"{}\" is not valid UTF-8 (byte {}); fix the "
                                    "config's encoding",
                                    s, i));
    }
    i += len;
    switch (cp) {
      case '"': *out += "\\\""; continue;
      case '\\': *out += "\\\\"; continue;
      case '\b': *out += "\\b"; continue;
      case '\f': *out += "\\f"; continue;
      case '\n': *out += "\\n"; continue;
      case '\r': *out += "\\r"; continue;
      case '\t': *out += "\\t"; continue;
      default: break;
    }
    if (cp >= 0x20 && cp <= 0x7e) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x10000) {
      *out += fmt::format("\\u{:04x}", cp);
    } else {
      const uint32_t v = cp - 0x10000;
      *out += fmt::format("\\u{:04x}\\u{:04x}", 0xd800 | (v >> 10), 0xdc00 | (v & 0x3ff));
    }
  }
  out->push_back('"');
}

void append_python_json(const nlohmann::ordered_json& v, int level, std::string* out) {
  constexpr int kIndent = 4;
  switch (v.type()) {
    case nlohmann::json::value_t::object:
    case nlohmann::json::value_t::array: {
      const bool object = v.is_object();
      if (v.empty()) {
        *out += object ? "{}" : "[]";
        return;
      }
      out->push_back(object ? '{' : '[');
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        *out += first ? "\n" : ",\n";
        first = false;
        out->append(static_cast<size_t>(kIndent * (level + 1)), ' ');
        if (object) {
          append_python_string(it.key(), out);
          *out += ": ";
        }
        append_python_json(*it, level + 1, out);
      }
      out->push_back('\n');
      out->append(static_cast<size_t>(kIndent * level), ' ');
      out->push_back(object ? '}' : ']');
      return;
    }
    case nlohmann::json::value_t::string:
      append_python_string(v.get_ref<const std::string&>(), out);
      return;
    case nlohmann::json::value_t::boolean:
      *out += v.get<bool>() ? "true" : "false";
      return;
    case nlohmann::json::value_t::null:
      *out += "null";
      return;
    case nlohmann::json::value_t::number_integer:
      *out += std::to_string(v.get<int64_t>());
      return;
    case nlohmann::json::value_t::number_unsigned:
      *out += std::to_string(v.get<uint64_t>());
      return;
    case nlohmann::json::value_t::number_float:
      append_python_float(v.get<double>(), out);
      return;
    default:
      TORCH_CHECK(false, "fg.json: unexpected JSON value");
  }
}

// Appends `feature`'s entries to `out`.
void append_entries(const Feature& feature, const FgJsonOptions& options, nlohmann::ordered_json* out) {
  std::vector<std::pair<std::string, std::string>> copies;  // entry key -> the copy's name
  if (!options.asset_dir.empty()) {
    for (const FeatureAsset& a : feature.assets()) {
      const size_t dot = a.field.rfind('.');
      copies.emplace_back(dot == std::string::npos ? a.field : a.field.substr(dot + 1),
                          copy_asset(a.path, options.asset_dir));
    }
  }
  for (nlohmann::ordered_json& entry : feature.fg_json()) {
    for (const auto& [key, name] : copies) {
      if (entry.contains(key)) entry[key] = name;
    }
    if (options.remove_bucketizer) remove_bucketizer(&entry);
    out->push_back(std::move(entry));
  }
}

}  // namespace

nlohmann::ordered_json create_fg_json(const protos::EasyRecConfig& config, const FgJsonOptions& options) {
  const FeatureSet set = build_features(config);
  nlohmann::ordered_json features = nlohmann::ordered_json::array();
  std::map<std::string, size_t> group_index;  // sequence_name -> its entry in `features`
  // set.features holds the features in config order with each group's sub-features in place.
  size_t next = 0;
  auto take = [&]() -> const Feature& {
    TORCH_CHECK(next < set.features.size(), "create_fg_json: fewer features built than configured");
    return *set.features[next++];
  };
  for (const protos::FeatureConfig& fc : config.feature_configs()) {
    if (!fc.has_sequence_feature()) {
      append_entries(take(), options, &features);
      continue;
    }
    const protos::SequenceFeature& seq = fc.sequence_feature();
    auto [it, inserted] = group_index.emplace(seq.sequence_name(), features.size());
    if (inserted) {
      nlohmann::ordered_json group;
      group["sequence_name"] = seq.sequence_name();
      group["sequence_length"] = seq.sequence_length();
      group["sequence_delim"] = seq.sequence_delim();
      group["sequence_pk"] = seq.sequence_pk().empty() ? "user:" + seq.sequence_name() : seq.sequence_pk();
      group["features"] = nlohmann::ordered_json::array();
      features.push_back(std::move(group));
    }
    nlohmann::ordered_json& sub = features[it->second]["features"];
    for (int j = 0; j < seq.features_size(); ++j) append_entries(take(), options, &sub);
  }
  TORCH_CHECK(next == set.features.size(), "create_fg_json: more features built than configured");
  nlohmann::ordered_json doc;
  doc["features"] = std::move(features);
  if (options.reserves) doc["reserves"] = *options.reserves;
  return doc;
}

std::string fg_json_text(const nlohmann::ordered_json& doc) {
  std::string out;
  append_python_json(doc, 0, &out);
  return out;
}

void write_fg_json(const nlohmann::ordered_json& doc, const std::string& path) {
  data::TextFileOutput out(path, "fg.json");
  out.buffer() = fg_json_text(doc);
  out.finish();
}

}  // namespace tzrec::feature
