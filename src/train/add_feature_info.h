// `tzrec add_feature_info_to_config` (TorchEasyRec's tools/add_feature_info_to_config, the same
// flags): a pipeline config rewritten from a feature-analysis table — per feature an embedding
// dimension and a bucketizer chosen by the analysis, and the features it says to drop.
//
// The table (--config_table_path: CSV with a header or Parquet; a path ending in .csv / .parquet
// picks its reader, another path --reader_type, whose default OdpsReader is not supported here)
// has the columns `feature` (a feature name; a grouped sequence's sub-feature as
// "<sequence_name>__<feature>"), `feature_info` (a JSON object: "embedding_dim", and "boundary" —
// a list of numbers — or "hash_bucket_size"; numbers or their text) and `message` (null or
// text; "DROP IT" in it drops the feature). A feature named twice takes its last row.
//
// Applied to the template config (apply_feature_info), in TorchEasyRec's order:
//   1. drops: each dropped feature's config; a grouped sequence's dropped sub-features, and the
//      sequence once it has none left;
//   2. per remaining feature with a row: embedding_dim set; then boundaries replaced by
//      "boundary", or else hash_bucket_size set by "hash_bucket_size"; a feature without a row is
//      logged ("no info") and kept as it is;
//   3. the dropped names leave every feature group's feature_names and sequence_groups; a
//      sequence group left empty is removed with the sequence encoders reading it.
// A feature group left without features is kept, with a warning (the config will not train).
//
// Errors name the table row or the config field: a row without a feature name, feature_info that
// is not a JSON object or lacks embedding_dim, a value that is not an integer (embedding_dim,
// hash_bucket_size) or a list of numbers (boundary), a field the feature's type does not have
// (boundaries on an id_feature, hash_bucket_size on a raw_feature).
#pragma once

#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::train {

struct AddFeatureInfoOptions {
  std::string template_model_config_path;  // required
  std::string model_config_path;           // required: the config written
  std::string config_table_path;           // required
  std::string reader_type = "OdpsReader";
};

struct FeatureInfoTable {
  // feature name -> its feature_info, and where it was read ("file line 3") for errors.
  std::map<std::string, std::pair<nlohmann::json, std::string>> infos;
  std::set<std::string> drops;
};

struct AddFeatureInfoSummary {
  int edited = 0;   // feature configs given an embedding_dim
  int dropped = 0;  // feature configs and sub-features dropped
};

// Reads the table (see above). DataError naming the file and row.
FeatureInfoTable read_feature_info_table(const std::string& path, const std::string& reader_type);

// Applies `table` to `config` (see above). ConfigError / DataError naming the field or row.
AddFeatureInfoSummary apply_feature_info(const FeatureInfoTable& table, protos::EasyRecConfig* config);

// Reads the template, applies the table, writes model_config_path.
AddFeatureInfoSummary add_feature_info_to_config(const AddFeatureInfoOptions& options);

}  // namespace tzrec::train
