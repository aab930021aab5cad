#include "feature/data_groups.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "config/feature_util.h"
#include "data/negative_sampler.h"

namespace tzrec::feature {

std::vector<bool> negative_features(const protos::DataConfig& data_config, const std::vector<FeaturePtr>& features) {
  std::vector<bool> neg(features.size(), false);
  const auto sampler = data::negative_sampler_config(data_config);
  if (!sampler) return neg;
  if (candidate_sequence(data_config, features)) return neg;  // the negatives join the candidate sequence
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
    if (f.cross_negative_group()) {
      throw NotSupportedError(fmt::format(
          "{} (feature {}) reading the sampled items' {} ({}): TorchEasyRec puts a {} over negatives in its "
          "cross-negative data group __CNEG__, not __NEG__ (use id or raw features of the attributes)",
          f.field_path(), f.info().name, sampler->config_path + ".attr_fields", fmt::join(item, ", "), f.info().type));
    }
    neg[i] = true;
  }
  return neg;
}

std::optional<CandidateSequence> candidate_sequence(const protos::DataConfig& data_config,
                                                    const std::vector<FeaturePtr>& features) {
  const auto sampler = data::negative_sampler_config(data_config);
  if (!sampler) return std::nullopt;
  const Feature* item = nullptr;
  for (const FeaturePtr& f : features) {
    if (f->info().stub || f->info().sequence_name.empty()) continue;
    const std::vector<std::string> inputs = f->input_columns();
    if (std::find(inputs.begin(), inputs.end(), sampler->item_id_field) != inputs.end()) item = f.get();
  }
  if (item == nullptr) return std::nullopt;
  CandidateSequence c;
  c.name = item->info().sequence_name;
  c.delim = item->info().sequence_delim;
  c.prefix = config::grouped_sequence_prefix(c.name);
  for (const std::string& a : sampler->attr_fields) c.columns.push_back(c.prefix + a);
  for (const FeaturePtr& f : features) {
    if (!c.holds(f->info())) continue;
    for (const std::string& col : f->input_columns()) {
      if (std::find(c.columns.begin(), c.columns.end(), col) != c.columns.end()) continue;
      throw ConfigError(fmt::format(
          "{} (feature {}): the candidate sequence '{}' gets its negatives from {} (item_id_field {}), which "
          "provides only the columns {}; add '{}' (without the '{}' prefix) to attr_fields",
          f->field_path(), f->info().name, c.name, sampler->config_path, sampler->item_id_field,
          fmt::join(c.columns, ", "), col.rfind(c.prefix, 0) == 0 ? col.substr(c.prefix.size()) : col, c.prefix));
    }
  }
  return c;
}

}  // namespace tzrec::feature
