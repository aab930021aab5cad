// Internals of validate(): the problem collector and the per-section checks.
#pragma once

#include <string>
#include <vector>

#include "config/pipeline_config.h"

namespace tzrec::config::detail {

class Problems {
 public:
  void add(const std::string& path, const std::string& message) {
    for (const Problem& p : list_) {
      if (p.path == path && p.message == message) return;  // reported by two checks
    }
    list_.push_back({path, message});
  }
  // "not supported yet: <path>[: <detail>]" at <path>.
  void not_supported(const std::string& path, const std::string& detail = "") {
    add(path, "not supported yet: " + path + (detail.empty() ? "" : ": " + detail));
  }
  std::vector<Problem> take() { return std::move(list_); }

 private:
  std::vector<Problem> list_;
};

// "<base>.<field>[<i>]" (or "<field>[<i>]" when base is empty).
inline std::string item_path(const std::string& base, const std::string& field, int i) {
  return (base.empty() ? "" : base + ".") + field + "[" + std::to_string(i) + "]";
}

// "model_config.feature_groups[<i>]".
inline std::string group_path(int i) { return item_path("model_config", "feature_groups", i); }

// The name of the field set in oneof `oneof_name` of `msg`, or "" when none is.
std::string oneof_set(const google::protobuf::Message& msg, const char* oneof_name);

// A required MLP: "required" when absent (its own rules are checked when it is built).
void required_mlp(bool has, const std::string& path, Problems* problems);

void validate_data(const protos::EasyRecConfig& config, Problems* problems);
void validate_train(const protos::EasyRecConfig& config, Problems* problems);
void validate_model(const protos::EasyRecConfig& config, Problems* problems);
// validate_wide_and_dcn.cc: model_config.wide_and_deep / dcn_v1 / dcn_v2 and the groups they need.
void validate_wide_and_deep(const protos::ModelConfig& model, Problems* problems);
void validate_dcn_v1(const protos::ModelConfig& model, Problems* problems);
void validate_dcn_v2(const protos::ModelConfig& model, Problems* problems);
// validate_dlrm_xdeepfm_mask_net.cc: model_config.dlrm / xdeepfm / mask_net and the groups they
// need; validate_mask_net_module checks a MaskNetModule at path `p` (also dbmtl.mask_net).
void validate_dlrm(const protos::EasyRecConfig& config, Problems* problems);
void validate_xdeepfm(const protos::ModelConfig& model, Problems* problems);
void validate_mask_net(const protos::ModelConfig& model, Problems* problems);
void validate_mask_net_module(const protos::MaskNetModule& m, const std::string& p, Problems* problems);

}  // namespace tzrec::config::detail
