#include "feature/features.h"

#include "feature/feature_registry.h"

namespace tzrec::feature {

std::vector<FeatureInfo> build_feature_infos(const protos::EasyRecConfig& config) {
  std::vector<FeatureInfo> out;
  for (const FeaturePtr& f : build_features(config).features) out.push_back(f->info());
  return out;
}

}  // namespace tzrec::feature
