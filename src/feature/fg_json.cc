#include "feature/fg_json.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string_view>

#include <c10/util/Exception.h>
#include <fmt/format.h>

#include "base/error.h"
#include "base/python_json.h"
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
  try {
    return python_json_dumps(doc);
  } catch (const DataError& e) {
    throw ConfigError(std::string("fg.json: ") + e.what() + "; fix the config's encoding");
  }
}

void write_fg_json(const nlohmann::ordered_json& doc, const std::string& path) {
  data::TextFileOutput out(path, "fg.json");
  out.buffer() = fg_json_text(doc);
  out.finish();
}

}  // namespace tzrec::feature
