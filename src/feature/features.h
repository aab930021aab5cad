// Feature configs -> what the model side needs per feature.
#pragma once

#include <vector>

#include "feature/feature_info.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::feature {

// One FeatureInfo per feature (feature_registry.h), in config order, grouped sequences expanded:
//   num_embeddings (docs/tzrec-compatibility.md §5.4): id_feature zch.zch_size > hash_bucket_size > num_buckets >
//     len(effective vocab_list) (vocab_list + default value + <OOV> unless
//     default_bucketize_value is set) > max(vocab_dict incl. default value -> 0) + 1;
//     raw_feature with boundaries: len(boundaries) + 1 (sparse); without: dense, value_dim.
//   embedding_name: embedding_name or "{feature_name}_emb".
// stub_type features are left out (they do not reach the model); a feature group naming one is a
// ConfigError at its feature_names entry.
// Throws NotSupportedError naming the field for options this build does not implement (dynamicemb,
// ...), ConfigError for invalid settings.
std::vector<FeatureInfo> build_feature_infos(const protos::EasyRecConfig& config);

}  // namespace tzrec::feature
