// Pipeline config (tzrec.protos.EasyRecConfig): load / save / edit / validate.
//
// Text format (.config) and JSON (.json) are read the way TorchEasyRec reads them: proto2
// `required` fields are not enforced, unknown fields and syntax errors are errors
// ("path:line:column: message"), and the deprecated data_config.fg_encoded is rewritten into
// data_config.fg_mode after parsing.
#pragma once

#include <string>
#include <vector>

#include "config/feature_util.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::config {

// Reads .json (JSON) or anything else (protobuf text format) into EasyRecConfig.
// Throws ConfigError naming the path when the file is missing or does not parse.
protos::EasyRecConfig load_pipeline_config(const std::string& path);

// Parses `text`; `source_name` is used in error messages and selects JSON when it ends
// with ".json". Applies the fg_encoded rewrite.
protos::EasyRecConfig parse_pipeline_config_text(const std::string& text,
                                                 const std::string& source_name);

// The deprecated fg_encoded rewrite (docs/tzrec-compatibility.md §2.0): if data_config.fg_encoded is set,
// true -> FG_NONE, false with fg_threads > 0 -> FG_DAG, else FG_NORMAL.
void apply_fg_encoded_rewrite(protos::EasyRecConfig* config);

// TorchEasyRec --edit_config_json semantics: a JSON object of dotted paths -> values.
// Paths support `name[i]`, `name[:]`, `name[a:b]` and selectors `name[sub.path=value]`
// (also >, <, >=, <=). Several keys / values may be joined by ';'. Scalar values are
// converted to the field type; repeated and message values are parsed as text format.
// Throws ConfigError naming the path on a bad path or value.
void edit_config(protos::EasyRecConfig* config, const std::string& edit_json);

// Text format (UTF-8 kept unescaped) as TorchEasyRec saves it.
std::string to_text(const protos::EasyRecConfig& config);
// Writes to_text(config) to `path`, creating parent directories. Throws IoError.
void save_pipeline_config(const protos::EasyRecConfig& config, const std::string& path);

struct Problem {
  std::string path;     // e.g. "feature_configs[3].id_feature.embedding_dim"
  std::string message;  // e.g. "must be > 0"
};

// Semantic validation against what this build supports. Returns every problem found.
std::vector<Problem> validate(const protos::EasyRecConfig& config);

// Throws ConfigError whose message lists all problems, one per line ("path: message").
void check_valid(const protos::EasyRecConfig& config);

}  // namespace tzrec::config
