#include "feature/features.h"

#include "feature/feature_spec.h"

namespace tzrec::feature {

std::vector<FeatureInfo> build_feature_infos(const protos::EasyRecConfig& config) {
  std::vector<FeatureInfo> out;
  for (auto& f : build_parser_spec(config).features) out.push_back(std::move(f.info));
  return out;
}

}  // namespace tzrec::feature
