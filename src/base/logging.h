// Minimal leveled logging to stderr. Level from env LOG_LEVEL (DEBUG, INFO, WARNING, ERROR).
#pragma once

#include <string>

#include <fmt/format.h>

namespace tzrec::log {

enum class Level { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

Level current_level();
void set_level(Level level);
void write(Level level, const std::string& message);

template <typename... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (current_level() <= Level::kDebug) write(Level::kDebug, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  if (current_level() <= Level::kInfo) write(Level::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void warning(fmt::format_string<Args...> f, Args&&... args) {
  if (current_level() <= Level::kWarning) write(Level::kWarning, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void error(fmt::format_string<Args...> f, Args&&... args) {
  write(Level::kError, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace tzrec::log
