#include "loss/sid_distance.h"

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::loss {

SidDistance parse_sid_distance(const std::string& value, const std::string& path) {
  if (value == "l2") return SidDistance::kL2;
  if (value == "l1") return SidDistance::kL1;
  if (value == "cos") return SidDistance::kCos;
  throw ConfigError(fmt::format("{}: \"{}\" is not a distance; use \"l2\", \"l1\" or \"cos\"", path, value));
}

}  // namespace tzrec::loss
