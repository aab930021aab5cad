// fg.json, the feature-generation document of a config (docs/tzrec-compatibility.md §5.3), as
// TorchEasyRec's create_fg_json writes it (tzrec/features/feature.py, tools/create_fg_json.py,
// and export_util.py for the export package):
//
//   {
//       "features": [ <entries of each feature, in config order>,
//                     {"sequence_name", "sequence_length", "sequence_delim", "sequence_pk",
//                      "features": [<entries of the group's sub-features>]}, ... ],
//       "reserves": [<column>, ...]          only when reserves are given
//   }
//
// Each feature writes its own entries (Feature::fg_json(), in its type's file). A grouped
// sequence_feature is one entry, placed where its sequence_name first appears; sub-features of
// later groups with the same sequence_name join it (as TorchEasyRec). sequence_pk defaults to
// "user:<sequence_name>". remove_bucketizer drops hash_bucket_size, vocab_list, vocab_dict,
// boundaries, num_buckets and vocab_file (but a tokenize_feature's) from every entry
// (default_bucketize_value stays), for data that is bucketized at training time (FG_BUCKETIZE).
//
// The text is Python's json.dump(doc, f, indent=4): one item per line, 4 spaces per level, "key":
// value, non-ASCII and control characters as \uXXXX, no newline at the end.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::feature {

// The file name create_fg_json and export write.
inline constexpr const char* kFgJsonFile = "fg.json";

struct FgJsonOptions {
  bool remove_bucketizer = false;
  // Set: the features' assets are copied into this directory (feature/assets.h) and the entries
  // name the copies, as TorchEasyRec's create_fg_json(asset_dir=...); empty: the entries name the
  // files as configured.
  std::string asset_dir;
  std::optional<std::vector<std::string>> reserves;  // set: "reserves" is written (also when empty)
};

// The fg.json document of `config`'s features (built and checked as training builds them:
// ConfigError / NotSupportedError naming the field path; NotSupportedError "create_fg_json for
// <type>" for a feature type that has no fg.json entries here).
nlohmann::ordered_json create_fg_json(const protos::EasyRecConfig& config, const FgJsonOptions& options = {});

// The text TorchEasyRec writes for `doc` (see above). ConfigError when a config string is not
// valid UTF-8.
std::string fg_json_text(const nlohmann::ordered_json& doc);

// Writes fg_json_text(doc) to `path` (through "<path>.tmp", renamed when complete); IoError naming
// the file when it cannot be written.
void write_fg_json(const nlohmann::ordered_json& doc, const std::string& path);

}  // namespace tzrec::feature
