// Assertions the config-validation tests share (header-only; tests only).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "config/pipeline_config.h"

namespace tzrec::config::testing {

// The message of the ConfigError `fn` throws, or "<no ConfigError>".
inline std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no ConfigError>";
}

inline std::string dump(const std::vector<Problem>& problems) {
  std::string out;
  for (const auto& p : problems) out += "  " + p.path + ": " + p.message + "\n";
  return out.empty() ? "  (none)\n" : out;
}

// validate(config) reports a problem at `path` whose message contains `message_part`.
inline ::testing::AssertionResult HasProblem(const protos::EasyRecConfig& config, const std::string& path,
                                             const std::string& message_part) {
  const auto problems = validate(config);
  for (const auto& p : problems) {
    if (p.path == path && p.message.find(message_part) != std::string::npos) return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no problem '" << path << ": ..." << message_part << "...'; got:\n"
                                       << dump(problems);
}

inline ::testing::AssertionResult NotSupported(const protos::EasyRecConfig& config, const std::string& path) {
  return HasProblem(config, path, "not supported yet: " + path);
}

inline ::testing::AssertionResult NoProblems(const protos::EasyRecConfig& config) {
  const auto problems = validate(config);
  if (problems.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << dump(problems);
}

}  // namespace tzrec::config::testing
