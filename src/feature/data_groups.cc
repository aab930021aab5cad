#include "feature/data_groups.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/error.h"
#include "data/negative_sampler.h"

namespace tzrec::feature {

std::vector<bool> negative_features(const protos::DataConfig& data_config, const std::vector<FeaturePtr>& features) {
  std::vector<bool> neg(features.size(), false);
  const auto sampler = data::negative_sampler_config(data_config);
  if (!sampler) return neg;
  const auto& attrs = sampler->attr_fields;
  auto is_attr = [&](const std::string& c) { return std::find(attrs.begin(), attrs.end(), c) != attrs.end(); };
  for (size_t i = 0; i < features.size(); ++i) {
    const Feature& f = *features[i];
    if (f.info().stub) continue;  // never parsed into a batch
    const std::vector<std::string> inputs = f.input_columns();
    std::vector<std::string> item, other;
    for (const std::string& c : inputs) (is_attr(c) ? item : other).push_back(c);
    if (item.empty()) continue;
    if (!other.empty()) {
      throw NotSupportedError(fmt::format(
          "{} (feature {}) reading the sampled items' {} ({}) together with other inputs ({}): TorchEasyRec's "
          "cross-negative data group",
          f.field_path(), f.info().name, sampler->config_path + ".attr_fields", fmt::join(item, ", "),
          fmt::join(other, ", ")));
    }
    if (f.info().is_sequence) {
      throw NotSupportedError(fmt::format("{} (feature {}): a sequence feature over the sampled items' {}",
                                          f.field_path(), f.info().name, sampler->config_path + ".attr_fields"));
    }
    neg[i] = true;
  }
  return neg;
}

}  // namespace tzrec::feature
