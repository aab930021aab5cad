#include "base/logging.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <string_view>

namespace tzrec::log {
namespace {

Level level_from_env() {
  const char* env = std::getenv("LOG_LEVEL");
  if (env == nullptr) return Level::kInfo;
  std::string_view v(env);
  if (v == "DEBUG" || v == "debug") return Level::kDebug;
  if (v == "WARNING" || v == "WARN" || v == "warning") return Level::kWarning;
  if (v == "ERROR" || v == "error") return Level::kError;
  return Level::kInfo;
}

std::atomic<int>& level_storage() {
  static std::atomic<int> level{static_cast<int>(level_from_env())};
  return level;
}

const char* level_name(Level level) {
  switch (level) {
    case Level::kDebug: return "DEBUG";
    case Level::kInfo: return "INFO";
    case Level::kWarning: return "WARNING";
    case Level::kError: return "ERROR";
  }
  return "INFO";
}

}  // namespace

Level current_level() { return static_cast<Level>(level_storage().load()); }

void set_level(Level level) { level_storage().store(static_cast<int>(level)); }

void write(Level level, const std::string& message) {
  static std::mutex mu;
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "[%s %s] %s\n", stamp, level_name(level), message.c_str());
  std::fflush(stderr);
}

}  // namespace tzrec::log
