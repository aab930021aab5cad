// Zero-collision hashing settings of a sparse feature (`zch`, docs/tzrec-compatibility.md §5.12),
// shared by every type that has the field (id, combo, lookup, match, custom and bool_mask
// features, also as sequences): with `zch` the feature's ids are raw 64-bit ids — feature
// generation hashes every value, string or number, with hash_bucket_size kZchHashBucketSize
// (TorchEasyRec's MAX_HASH_BUCKET_SIZE, 2^63 - 1), FG_NONE columns hold them as they are — and the
// table has zch.zch_size rows (zch takes precedence over every other table size).
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "feature/feature_info.h"
#include "tzrec/protos/feature.pb.h"

namespace tzrec::feature {

// TorchEasyRec's MAX_HASH_BUCKET_SIZE: the hash range of zch features' feature generation, and the
// hash_bucket_size their fg.json entries carry.
inline constexpr uint64_t kZchHashBucketSize = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// The table size of a `zch` message at `zch_path` ("...id_feature.zch"): zch_size, a ConfigError at
// "<zch_path>.zch_size" unless it is in [1, 2^63 - 1].
int64_t zch_table_size(uint64_t zch_size, const std::string& zch_path);

// A feature's `zch` message at `zch_path` into info: zch_path, num_embeddings = zch_size, the
// eviction interval, policy (a ConfigError at zch_path when none is set), decay exponent and
// threshold filter. The remaining checks (interval, threshold filter) are the ZchModule's, when the
// model is built.
void fill_zch_info(const protos::ZeroCollisionHash& z, const std::string& zch_path, FeatureInfo* info);

// fill_zch_info of feature message c at `path` when it sets zch (Msg: any feature message with a
// `zch` field); nothing otherwise.
template <typename Msg>
void fill_zch_info_of(const Msg& c, const std::string& path, FeatureInfo* info) {
  if (c.has_zch()) fill_zch_info(c.zch(), path + ".zch", info);
}

}  // namespace tzrec::feature
