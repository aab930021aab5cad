// The dense embedding of a dense feature (`autodis` / `mlp` of raw, expr, lookup and match
// features, docs/tzrec-compatibility.md §5.11) into its FeatureInfo, with TorchEasyRec's rules:
//   - a sequence feature: raw and expr features ignore it in TorchEasyRec (a warning says so);
//     lookup and match features cannot run with it there (ConfigError);
//   - a sparse feature (boundaries or a bucketizer) is looked up in its table and ignores it (a
//     warning says so);
//   - otherwise embedding_dim must be > 0; autodis needs value_dim <= 1, num_channels > 0, a finite
//     temperature > 0 and a finite keep_prob; mlp needs value_dim >= 1; the feature name must not
//     contain '.' (the parameters are named after it). Each breach is a ConfigError naming the field.
// Call it once info->name, is_sparse and is_sequence are set.
#pragma once

#include <cstdint>
#include <string>

#include "feature/feature_info.h"
#include "tzrec/protos/feature.pb.h"

namespace tzrec::feature {

// What a sequence feature's autodis / mlp does: ignored with a warning (raw, expr), or refused
// (lookup, match).
enum class SequenceDenseEmbedding { kIgnored, kRefused };

// `autodis`: the configured message or nullptr; `mlp`: whether mlp is set; `value_dim`:
// TorchEasyRec's value_dim of the feature (configured, else 1); `path`: the feature's field path
// ("feature_configs[3].raw_feature").
void fill_dense_embedding(const protos::AutoDisEmbedding* autodis, bool mlp, uint32_t embedding_dim, int64_t value_dim,
                          SequenceDenseEmbedding on_sequence, const std::string& path, FeatureInfo* info);

// Msg: RawFeature, ExprFeature, LookupFeature, MatchFeature, OverlapFeature, KvDotProduct or
// CombineFeature.
template <typename Msg>
void fill_dense_embedding(const Msg& c, int64_t value_dim, SequenceDenseEmbedding on_sequence, const std::string& path,
                          FeatureInfo* info) {
  fill_dense_embedding(c.has_autodis() ? &c.autodis() : nullptr, c.has_mlp(), c.embedding_dim(), value_dim,
                       on_sequence, path, info);
}

}  // namespace tzrec::feature
