#include "feature/feature.h"

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "config/feature_util.h"

namespace tzrec::feature {

Feature::Feature(const std::string& feature_name, const std::string& path, const std::string& type,
                 const BuildContext& ctx)
    : field_path_(path), fg_mode_(ctx.fg_mode), multival_sep_(ctx.multival_sep) {
  if (feature_name.empty()) throw ConfigError(path + ".feature_name: must be set");
  info_.name = config::grouped_sequence_name(ctx.sequence_name, feature_name);
  info_.type = type;
  info_.path = path;
  info_.stub = ctx.stub_type;
  info_.use_mask = ctx.use_mask;
}

std::vector<nlohmann::ordered_json> Feature::fg_json_entries() const {
  throw NotSupportedError(fmt::format("create_fg_json for {} ({})", info_.type, field_path_));
}

std::vector<nlohmann::ordered_json> Feature::fg_json() const {
  std::vector<nlohmann::ordered_json> entries = fg_json_entries();
  if (!info_.is_sequence) return entries;
  const bool grouped = !info_.sequence_name.empty();
  for (nlohmann::ordered_json& e : entries) {
    // TorchEasyRec's feature generator needs a non-empty default value in sequences.
    const auto it = e.find("default_value");
    if (it == e.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) e["default_value"] = "0";
    if (grouped) continue;  // the group's entry carries the sequence settings
    e["sequence_delim"] = info_.sequence_delim;
    e["sequence_length"] = info_.sequence_length;
    e["feature_type"] = "sequence_" + e.at("feature_type").get<std::string>();
  }
  return entries;
}

}  // namespace tzrec::feature
