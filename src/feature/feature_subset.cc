#include "feature/feature_subset.h"

#include <vector>

#include "feature/feature_registry.h"

namespace tzrec::feature {

protos::EasyRecConfig keep_features(const protos::EasyRecConfig& config, const std::set<std::string>& names) {
  const FeatureSet set = build_features(config);
  // The config entry of every feature: a grouped sequence_feature holds one per sub-feature.
  std::vector<int> entry_of;
  for (int i = 0; i < config.feature_configs_size(); ++i) {
    const protos::FeatureConfig& fc = config.feature_configs(i);
    const int n = fc.has_sequence_feature() ? fc.sequence_feature().features_size() : 1;
    entry_of.insert(entry_of.end(), static_cast<size_t>(n), i);
  }
  std::set<int> keep;
  std::set<size_t> done;
  std::set<std::string> wanted = names;
  const std::string prefix = dag_input_column("feature", "");
  bool grew = true;
  while (grew) {  // until no kept feature reads a feature that is not kept yet
    grew = false;
    for (size_t k = 0; k < set.features.size() && k < entry_of.size(); ++k) {
      if (wanted.count(set.features[k]->info().name) == 0 || !done.insert(k).second) continue;
      grew = true;
      keep.insert(entry_of[k]);
      for (const std::string& column : set.features[k]->input_columns()) {
        if (column.rfind(prefix, 0) == 0) wanted.insert(column.substr(prefix.size()));
      }
    }
  }
  protos::EasyRecConfig out = config;
  out.clear_feature_configs();
  for (int i : keep) *out.add_feature_configs() = config.feature_configs(i);
  return out;
}

}  // namespace tzrec::feature
