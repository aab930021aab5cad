// validate(): model checks of wide_and_deep, dcn_v1 and dcn_v2 (model_config.<name>).
#include <fmt/format.h>

#include "config/validate_internal.h"

namespace tzrec::config::detail {

namespace {

// The index of the feature group named `name` (-1 when there is none; then a problem unless
// optional), with a problem when its group_type is not `type`.
int need_group(const protos::ModelConfig& model, const std::string& model_name, const std::string& name,
               protos::FeatureGroupType type, Problems* problems) {
  const std::string type_name = protos::FeatureGroupType_Name(type);
  for (int i = 0; i < model.feature_groups_size(); ++i) {
    if (model.feature_groups(i).group_name() != name) continue;
    if (model.feature_groups(i).group_type() != type) {
      problems->add(group_path(i) + ".group_type", model_name + " group '" + name + "' must be " + type_name);
    }
    return i;
  }
  problems->add("model_config.feature_groups",
                model_name + " needs a feature group named '" + name + "' (group_type: " + type_name + ")");
  return -1;
}

void need_first_group(const protos::ModelConfig& model, const std::string& model_name, Problems* problems) {
  if (model.feature_groups_size() == 0) {
    problems->add("model_config.feature_groups", model_name + " needs a feature group (it uses the first one)");
  }
}

void must_be_positive(uint32_t value, const std::string& path, Problems* problems) {
  if (value < 1) problems->add(path, fmt::format("must be >= 1, got {}", value));
}

}  // namespace

void validate_wide_and_deep(const protos::ModelConfig& model, Problems* problems) {
  const std::string p = "model_config.wide_and_deep";
  const auto& wd = model.wide_and_deep();
  need_group(model, "WideAndDeep", "wide", protos::WIDE, problems);
  need_group(model, "WideAndDeep", "deep", protos::DEEP, problems);
  required_mlp(wd.has_deep(), p + ".deep", problems);
  if (wd.wide_embedding_dim() == 0) problems->add(p + ".wide_embedding_dim", "must be > 0");
}

void validate_dcn_v1(const protos::ModelConfig& model, Problems* problems) {
  const std::string p = "model_config.dcn_v1";
  const auto& dcn = model.dcn_v1();
  need_first_group(model, "DCNV1", problems);
  if (!dcn.has_cross()) {
    problems->add(p + ".cross", "required, e.g. cross { cross_num: 3 }");
  } else {
    must_be_positive(dcn.cross().cross_num(), p + ".cross.cross_num", problems);
  }
  required_mlp(dcn.has_deep(), p + ".deep", problems);
  required_mlp(dcn.has_final(), p + ".final", problems);
}

void validate_dcn_v2(const protos::ModelConfig& model, Problems* problems) {
  const std::string p = "model_config.dcn_v2";
  const auto& dcn = model.dcn_v2();
  need_first_group(model, "DCNV2", problems);
  if (!dcn.has_cross()) {
    problems->add(p + ".cross", "required, e.g. cross { cross_num: 3 low_rank: 32 }");
  } else {
    must_be_positive(dcn.cross().cross_num(), p + ".cross.cross_num", problems);
    must_be_positive(dcn.cross().low_rank(), p + ".cross.low_rank", problems);
  }
  required_mlp(dcn.has_final(), p + ".final", problems);
}

}  // namespace tzrec::config::detail
