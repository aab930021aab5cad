#include "feature/zch_settings.h"

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::feature {

int64_t zch_table_size(uint64_t zch_size, const std::string& zch_path) {
  if (zch_size == 0 || zch_size > kZchHashBucketSize) {
    throw ConfigError(fmt::format("{}.zch_size: {} must be in [1, 2^63 - 1]", zch_path, zch_size));
  }
  return static_cast<int64_t>(zch_size);
}

void fill_zch_info(const protos::ZeroCollisionHash& z, const std::string& zch_path, FeatureInfo* info) {
  info->num_embeddings = zch_table_size(z.zch_size(), zch_path);
  info->zch_path = zch_path;
  info->zch_eviction_interval = z.eviction_interval();
  info->zch_threshold_filtering_func = z.threshold_filtering_func();
  switch (z.eviction_policy_case()) {
    case protos::ZeroCollisionHash::kLfu:
      info->zch_eviction = "lfu";
      break;
    case protos::ZeroCollisionHash::kLru:
      info->zch_eviction = "lru";
      info->zch_decay_exponent = z.lru().decay_exponent();
      break;
    case protos::ZeroCollisionHash::kDistanceLfu:
      info->zch_eviction = "distance_lfu";
      info->zch_decay_exponent = z.distance_lfu().decay_exponent();
      break;
    default:
      throw ConfigError(fmt::format("{}: set an eviction policy: lfu {{}}, lru {{}} or distance_lfu {{}}", zch_path));
  }
}

}  // namespace tzrec::feature
