// The vocab_file of id, combo, lookup, match and custom features (docs/tzrec-compatibility.md
// §5.4), read by the features and by gen_data: a text file of one token per line — its id is its line number (0-based) — or of one
// "token id" pair per line (token and id separated by the line's first space or tab; a line
// starting with a space is the empty token). The table has max(id) + 1 rows (the number of lines
// in the list form). Every line must have the same form; empty lines, duplicated tokens and ids
// that are not non-negative integers are ConfigErrors naming the file and line. The file is
// read relative to the working directory, or to the feature's asset_dir when that is set.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tzrec::config {

struct VocabFile {
  std::string path;                                     // as opened
  std::vector<std::pair<std::string, int64_t>> tokens;  // in file order
  int64_t num_embeddings = 0;
};

// The path a feature's vocab_file is read from: `vocab_file` joined to asset_dir when set.
std::string vocab_file_path(const std::string& vocab_file, bool has_asset_dir, const std::string& asset_dir);

// Reads `path`; `field_path` ("feature_configs[2].id_feature.vocab_file") names the field in
// errors (ConfigError when the file cannot be read or a line is malformed).
VocabFile read_vocab_file(const std::string& path, const std::string& field_path);

// The vocab file of the feature at `feature_path`: default_bucketize_value must be set with it
// (TorchEasyRec reserves no ids for the default value and OOV tokens of a vocab file) — a
// ConfigError at <feature_path>.default_bucketize_value otherwise — then read_vocab_file().
VocabFile load_feature_vocab_file(const std::string& path, const std::string& feature_path,
                                  bool has_default_bucketize_value);

}  // namespace tzrec::config
