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

void validate_data(const protos::EasyRecConfig& config, Problems* problems);
void validate_train(const protos::EasyRecConfig& config, Problems* problems);

}  // namespace tzrec::config::detail
