#include "feature/feature.h"

#include "base/error.h"

namespace tzrec::feature {

Feature::Feature(const std::string& feature_name, const std::string& path, const std::string& type,
                 const BuildContext& ctx)
    : field_path_(path), fg_mode_(ctx.fg_mode), multival_sep_(ctx.multival_sep) {
  if (feature_name.empty()) throw ConfigError(path + ".feature_name: must be set");
  info_.name = (ctx.sequence_name.empty() ? "" : ctx.sequence_name + "__") + feature_name;
  info_.type = type;
}

}  // namespace tzrec::feature
