#include "base/manual_seed.h"

#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec {

std::optional<uint64_t> manual_seed() {
  const char* seed = std::getenv("TORCH_MANUAL_SEED");
  if (seed == nullptr || *seed == '\0') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const unsigned long long parsed = std::strtoull(seed, &end, 10);
  if (*end != '\0' || *seed == '-' || *seed == '+' || errno == ERANGE) {
    throw UsageError(fmt::format(
        "environment variable TORCH_MANUAL_SEED={} is not an integer in [0, 2^64); set it to a seed such as 1", seed));
  }
  return static_cast<uint64_t>(parsed);
}

}  // namespace tzrec
