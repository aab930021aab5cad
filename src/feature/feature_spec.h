// Compiled, validated form of one feature config: everything the parser and the model side need,
// with protobuf defaults and TorchEasyRec's rules (docs/tzrec-compatibility.md §5.4, §5.5) already applied.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "feature/feature_info.h"
#include "feature/normalizer.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::feature {

// How FG modes turn an input string into an id.
enum class Bucketizer {
  kNone,        // dense raw_feature
  kHash,        // hash_bucket_size
  kNumBuckets,  // the value is the id
  kVocab,       // vocab_list / vocab_dict lookup (see vocab, oov_id)
  kBoundaries,  // raw_feature boundaries
};

enum class FgMode { kNone, kNormal };  // FG_DAG is handled like FG_NORMAL in this build

struct FeatureSpec {
  FeatureInfo info;
  int config_index = 0;    // position in feature_configs
  std::string field_path;  // "feature_configs[3].id_feature"
  std::string input_column;

  // FG_NONE
  std::optional<std::string> fg_encoded_default;  // unset or "" -> no default

  // FG_NORMAL / FG_DAG
  std::string default_value;  // substituted for an empty cell before bucketizing
  std::string separator;      // multi-value separator of raw strings
  Bucketizer bucketizer = Bucketizer::kNone;
  uint64_t hash_bucket_size = 0;
  std::unordered_map<std::string, int64_t> vocab;  // token -> id
  int64_t oov_id = 1;
  std::vector<float> boundaries;  // sorted ascending
  int64_t raw_value_dim = 1;      // raw_feature: values per row (ids per row with boundaries)
  Normalizer normalizer;

  // "num_buckets 500", "hash_bucket_size 100", "vocab_list of 4 entries", ... for messages:
  // which config field determined num_embeddings.
  std::string table_size_source;
  // What to raise in a range error: "num_buckets", "hash_bucket_size", ...
  std::string table_size_field;
};

struct ParserSpec {
  FgMode fg_mode = FgMode::kNone;
  std::string multival_sep = "\x03";  // data_config.fg_encoded_multival_sep
  std::vector<FeatureSpec> features;  // config order
  std::vector<std::string> label_fields;
  std::vector<std::string> sample_weight_fields;
};

// Validates and compiles the id_feature / raw_feature configs. Throws NotSupportedError for other
// feature types and unsupported options, ConfigError for invalid settings (naming the field path).
ParserSpec build_parser_spec(const protos::EasyRecConfig& config);

}  // namespace tzrec::feature
