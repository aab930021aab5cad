#include "config/vocab_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <unordered_set>

#include "base/error.h"

namespace tzrec::config {

std::string vocab_file_path(const std::string& vocab_file, bool has_asset_dir, const std::string& asset_dir) {
  if (!has_asset_dir) return vocab_file;
  return (std::filesystem::path(asset_dir) / vocab_file).string();
}

VocabFile read_vocab_file(const std::string& path, const std::string& field_path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError(fmt::format("{}: cannot read vocab file {}; check the path (relative paths are read from the "
                                  "working directory, or from asset_dir when it is set)",
                                  field_path, path));
  }
  VocabFile out;
  out.path = path;
  std::unordered_set<std::string> seen;
  std::string line;
  int64_t line_no = 0;
  int with_ids = -1;  // unknown until the first line
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = fmt::format("{}: vocab file {} line {}", field_path, path, line_no);
    if (line.empty()) throw ConfigError(where + ": empty line; write one token (or \"token id\") per line");
    const size_t sep = line.find_first_of(" \t");
    const int has_id = sep != std::string::npos ? 1 : 0;
    if (with_ids >= 0 && has_id != with_ids) {
      throw ConfigError(fmt::format("{}: {}; every line must be a token alone or every line \"token id\"", where,
                                    has_id ? "\"token id\" after lines of tokens alone" : "a token alone after "
                                                                                         "\"token id\" lines"));
    }
    with_ids = has_id;
    std::string token = has_id ? line.substr(0, sep) : line;
    int64_t id = line_no - 1;
    if (has_id) {
      const std::string id_text = line.substr(line.find_first_not_of(" \t", sep) == std::string::npos
                                                  ? line.size()
                                                  : line.find_first_not_of(" \t", sep));
      const auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
      if (ec != std::errc() || end != id_text.data() + id_text.size() || id < 0) {
        throw ConfigError(fmt::format("{}: id '{}' of token '{}' is not a non-negative integer", where, id_text, token));
      }
    }
    if (!seen.insert(token).second) {
      throw ConfigError(fmt::format("{}: token '{}' is listed twice; each token may appear once", where, token));
    }
    out.num_embeddings = std::max(out.num_embeddings, id + 1);
    out.tokens.emplace_back(std::move(token), id);
  }
  if (out.tokens.empty()) throw ConfigError(fmt::format("{}: vocab file {} is empty", field_path, path));
  return out;
}

VocabFile load_feature_vocab_file(const std::string& path, const std::string& feature_path,
                                  bool has_default_bucketize_value) {
  if (!has_default_bucketize_value) {
    throw ConfigError(feature_path +
                      ".default_bucketize_value: must be set with vocab_file (the file's ids are used as they are; "
                      "default_bucketize_value is the id of values not in the file)");
  }
  return read_vocab_file(path, feature_path + ".vocab_file");
}

}  // namespace tzrec::config
