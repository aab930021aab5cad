#include "feature/features.h"

#include <set>

#include <fmt/format.h>

#include "base/error.h"
#include "feature/feature_registry.h"

namespace tzrec::feature {
namespace {

// A feature group naming a stub_type feature: ConfigError at the group's feature_names entry.
void check_group_names(const google::protobuf::RepeatedPtrField<std::string>& names, const std::string& path,
                       const std::set<std::string>& stubs) {
  for (int j = 0; j < names.size(); ++j) {
    if (stubs.count(names[j]) == 0) continue;
    throw ConfigError(fmt::format(
        "{}.feature_names[{}]: '{}' is a stub_type feature, an intermediate result of feature generation that "
        "does not reach the model; remove it from the group, or unset its stub_type",
        path, j, names[j]));
  }
}

}  // namespace

std::vector<FeatureInfo> build_feature_infos(const protos::EasyRecConfig& config) {
  std::vector<FeatureInfo> out;
  std::set<std::string> stubs;
  const FeatureSet set = build_features(config);
  for (size_t i = 0; i < set.features.size(); ++i) {
    const FeatureInfo& info = set.features[i]->info();
    if (info.stub) {
      stubs.insert(info.name);
      continue;
    }
    out.push_back(info);
    // A candidate sequence's sub-features carry the negatives in the batch's last row.
    out.back().sampled = set.neg[i] || (set.candidate && set.candidate->holds(info));
    out.back().neg = set.neg[i] && !set.force_base_data_group;
  }
  if (stubs.empty()) return out;
  const auto& groups = config.model_config().feature_groups();
  for (int i = 0; i < groups.size(); ++i) {
    const std::string path = fmt::format("model_config.feature_groups[{}]", i);
    check_group_names(groups[i].feature_names(), path, stubs);
    for (int k = 0; k < groups[i].sequence_groups_size(); ++k) {
      check_group_names(groups[i].sequence_groups(k).feature_names(), fmt::format("{}.sequence_groups[{}]", path, k),
                        stubs);
    }
  }
  return out;
}

}  // namespace tzrec::feature
