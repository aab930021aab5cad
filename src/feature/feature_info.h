// What the model side needs to know about each configured feature (no protobuf types here).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tzrec::feature {

// DynamicEmbInitializerArgs with TorchEasyRec's defaults applied (docs/tzrec-compatibility.md
// §5.13).
struct DynamicEmbInit {
  std::string mode = "UNIFORM";  // NORMAL | TRUNCATED_NORMAL | UNIFORM | CONSTANT
  double mean = 0.0;
  double std_dev = 0.0;
  double lower = 0.0;
  double upper = 0.0;
  double value = 0.0;
};

// A feature's `dynamicemb` (docs/tzrec-compatibility.md §5.13); path "" without one.
struct DynamicEmbSettings {
  std::string path;  // config path of the DynamicEmbedding message
  int64_t max_capacity = 0;
  int64_t init_capacity = 0;     // init_capacity_per_rank; 0: unset
  int64_t bucket_capacity = 128;
  std::string score_strategy = "STEP";
  DynamicEmbInit init;           // rows given to new ids
  DynamicEmbInit eval_init;      // ids not in the table, eval mode
  bool admission = false;        // frequency_admission_strategy set
  int64_t admission_threshold = 0;
  int64_t counter_capacity = 0;  // 0: unset (the table's max_capacity)
  int64_t counter_bucket_capacity = 1024;
  DynamicEmbInit admission_init;  // ids below the threshold
};

struct FeatureInfo {
  std::string name;             // feature_name (tensor key in Batch)
  std::string type;             // config oneof name: "id_feature", "sequence_raw_feature", ...
  std::string path;             // config path of the feature message ("feature_configs[3].id_feature")
  bool is_sparse = false;       // sparse → ids in Batch::sparse_features; dense → Batch::dense_features
  // Sparse features only (embedding_dim also for dense features with a dense embedding):
  int64_t num_embeddings = 0;   // table rows (docs/tzrec-compatibility.md §5.4 precedence)
  int64_t embedding_dim = 0;    // 0: not set (allowed for a feature no group uses, as in TorchEasyRec)
  std::string embedding_name;   // table name: embedding_name or "{feature_name}_emb"
  std::string pooling = "sum";  // "sum" | "mean"
  bool weighted = false;        // ids carry per-id weights
  bool trainable = true;
  std::string init_fn;          // e.g. "nn.init.uniform_,a=-0.01,b=0.01"; empty = default
  std::string data_type = "FP32";
  // Zero-collision hashing (`zch`, docs/tzrec-compatibility.md §5.12): the ids are raw 64-bit ids
  // (strings and numbers hashed as with hash_bucket_size 2^63 - 1, FG_NONE columns taken as they
  // are), remapped to num_embeddings = zch_size rows by the table's managed-collision module.
  // zch_path: the config path of the feature's `zch` message; "" without zch.
  std::string zch_path;
  int64_t zch_eviction_interval = 5;
  std::string zch_eviction;  // "lfu" | "lru" | "distance_lfu"
  double zch_decay_exponent = 1.0;
  std::string zch_threshold_filtering_func;
  // Dynamic embedding (`dynamicemb`): raw 64-bit ids as with zch, mapped to rows by a dynamic
  // table of num_embeddings = max_capacity rows.
  DynamicEmbSettings dynamicemb;
  // Dense features: width of the feature's block in Batch::dense_features (of each item for a
  // dense sequence). Sparse sequences: 1 = one id per item; otherwise several (0: any number,
  // n: raw_feature boundaries of n values per item).
  int64_t value_dim = 0;
  // Dense features with a dense embedding (docs/tzrec-compatibility.md §5.11): "autodis" or "mlp",
  // "" for none; a DEEP group then gets the feature's embedding_dim-wide embedding instead of its
  // value_dim floats. AutoDis settings as configured (float32, as the config holds them).
  std::string dense_embedding;
  int64_t autodis_num_channels = 0;
  float autodis_temperature = 0.1f;
  float autodis_keep_prob = 0.8f;
  // Sequences: a sequence_* feature, or a sub-feature of a grouped sequence_feature.
  bool is_sequence = false;
  std::string sequence_name;     // the grouped sequence's sequence_name; "" for sequence_* features
  int64_t sequence_length = 0;   // the configured maximum number of items (FG modes truncate)
  std::string sequence_delim;    // the items' separator in FG inputs (the group's for sub-features)
  // stub_type: an intermediate result of feature generation (an input of other features under
  // FG_DAG), not an input of the model (docs/tzrec-compatibility.md §5.2).
  bool stub = false;
  // use_mask in FG_NONE / FG_NORMAL (feature/sample_mask.h): in training the parser hands the
  // feature its first non-map input empty on the masked rows. False under FG_DAG / FG_BUCKETIZE,
  // where TorchEasyRec applies no masks either.
  bool use_mask = false;
  // Data group __NEG__ (docs/tzrec-compatibility.md §6.5): with a negative sampler, a feature
  // reading one of its attr_fields describes items, and its batch rows are the batch's rows
  // followed by the sampled negatives' (Batch::neg_*). Set by build_feature_infos (features.h);
  // a Feature's own info() leaves it false (FeatureSet::neg holds it).
  bool neg = false;
  // Read from the negative sampler's attr_fields: `neg`, or with data_config.force_base_data_group
  // a feature of __BASE__ whose rows are still the batch's followed by the negatives'.
  bool sampled = false;
};

}  // namespace tzrec::feature
