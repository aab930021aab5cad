#include "feature/boundaries.h"

#include <fmt/format.h>

#include <cmath>

#include "base/error.h"

namespace tzrec::feature {

void check_boundaries(const std::vector<float>& boundaries, const std::string& field_path) {
  for (size_t i = 0; i < boundaries.size(); ++i) {
    if (std::isnan(boundaries[i]) || (i > 0 && !(boundaries[i - 1] < boundaries[i]))) {
      throw ConfigError(
          fmt::format("{}: must be strictly increasing (entry {} is {})", field_path, i, boundaries[i]));
    }
  }
}

}  // namespace tzrec::feature
