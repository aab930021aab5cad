// Dynamic embedding settings of a sparse feature (`dynamicemb`, docs/tzrec-compatibility.md
// §5.13): like zch, the feature's ids are raw 64-bit ids (feature generation hashes every value
// with hash_bucket_size 2^63 - 1, FG_NONE columns hold them as they are); the table's rows are
// handed to ids by a dynamic hash table of max_capacity rows. zch takes precedence over
// dynamicemb, dynamicemb over every other table size (TorchEasyRec's order).
#pragma once

#include <cstdint>
#include <string>

#include "feature/feature_info.h"
#include "tzrec/protos/feature.pb.h"

namespace tzrec::feature {

// A feature's `dynamicemb` message at `path` ("...id_feature.dynamicemb") into info:
// info->dynamicemb with TorchEasyRec's initializer defaults applied for a table of
// max_capacity rows of info->embedding_dim (set it first), and num_embeddings = max_capacity.
// ConfigError for max_capacity outside [1, 2^31] (init_table is read by
// create_dynamicemb_init_ckpt only, train/dynamicemb_init_ckpt.h). The remaining checks (score
// strategy, capacities, initializer modes) are the dynamic table's, when the model is built.
void fill_dynamicemb_info(const protos::DynamicEmbedding& d, const std::string& path, FeatureInfo* info);

// The table size of a `dynamicemb` message at `path`: max_capacity, a ConfigError at
// "<path>.max_capacity" unless it is in [1, 2^31].
int64_t dynamicemb_table_size(uint64_t max_capacity, const std::string& path);

// fill_dynamicemb_info of feature message c at `path` when it sets dynamicemb and not zch (which
// takes precedence); nothing otherwise. info->embedding_dim must be set.
template <typename Msg>
void fill_dynamicemb_info_of(const Msg& c, const std::string& path, FeatureInfo* info) {
  if (!c.has_zch() && c.has_dynamicemb()) fill_dynamicemb_info(c.dynamicemb(), path + ".dynamicemb", info);
}

// The raw-id features: zch or dynamicemb.
inline bool has_raw_ids(const FeatureInfo& info) { return !info.zch_path.empty() || !info.dynamicemb.path.empty(); }

}  // namespace tzrec::feature
