// Boundaries of a bucketized number (raw_feature and the boundaries of lookup, match, expr,
// overlap, ... features), as TorchEasyRec's FG bucketizes values: the bucket of a value is the
// count of boundaries <= value, compared in float32 (std::upper_bound's index: a value equal to a
// boundary goes to the upper bucket, a NaN past every boundary). No torch.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace tzrec::feature {

// ConfigError at `field_path` unless the boundaries are strictly increasing and not NaN.
void check_boundaries(const std::vector<float>& boundaries, const std::string& field_path);

inline int64_t boundary_bucket(const std::vector<float>& boundaries, float value) {
  // Up to 32 boundaries (the usual few): every one compared, without a branch on the value — a
  // binary search's branches mispredict on unordered values and wait for the value's parse.
  if (boundaries.size() <= 32) {
    int64_t n = 0;
    for (const float b : boundaries) n += !(value < b);
    return n;
  }
  return static_cast<int64_t>(std::upper_bound(boundaries.begin(), boundaries.end(), value) - boundaries.begin());
}

}  // namespace tzrec::feature
