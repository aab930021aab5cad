#include "feature/sequence_feature.h"

#include <fmt/format.h>

#include "base/error.h"
#include "feature/feature_registry.h"

namespace tzrec::feature {

void expand_sequence_feature(const protos::SequenceFeature& c, const std::string& path, const BuildContext& ctx,
                             std::vector<FeaturePtr>* out) {
  if (c.sequence_name().empty()) throw ConfigError(path + ".sequence_name: must be set");
  if (c.sequence_delim().empty()) throw ConfigError(path + ".sequence_delim: must not be empty");
  if (c.features_size() == 0) {
    throw ConfigError(fmt::format("{}.features: sequence '{}' has no sub-features; add e.g. features {{ id_feature "
                                  "{{ ... }} }}",
                                  path, c.sequence_name()));
  }
  BuildContext sub = ctx;
  sub.sequence_name = c.sequence_name();
  sub.sequence_delim = c.sequence_delim();
  sub.sequence_length = c.sequence_length();
  const auto* oneof = protos::SeqFeatureConfig::descriptor()->FindOneofByName("feature");
  for (int j = 0; j < c.features_size(); ++j) {
    const protos::SeqFeatureConfig& f = c.features(j);
    const auto* field = f.GetReflection()->GetOneofFieldDescriptor(f, oneof);
    const std::string fp = fmt::format("{}.features[{}]", path, j);
    if (field == nullptr) throw ConfigError(fp + ": no feature type is set");
    out->push_back(make_feature(field->name(), f.GetReflection()->GetMessage(f, field), fp + "." + field->name(), sub,
                                /*sequence=*/true));
  }
}

}  // namespace tzrec::feature
