#include "embedding/table_name.h"

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::embedding {

std::string base_table_name(const FeatureSpec& f) { return f.embedding_name.empty() ? f.name + "_emb" : f.embedding_name; }

std::string group_table_name(const FeatureSpec& f, bool wide, const std::string& suffix) {
  std::string name = base_table_name(f);
  if (wide) name += "_wide";
  if (!suffix.empty()) name += "_" + suffix;
  return name;
}

void TableSuffixCheck::add(const std::string& table, const std::string& suffix, const std::string& feature,
                           const std::string& where) {
  auto [it, inserted] = first_.emplace(table, FirstUse{suffix, feature, where});
  if (inserted || it->second.suffix == suffix) return;
  auto shown = [](const std::string& s) { return s.empty() ? std::string("none") : "'" + s + "'"; };
  throw ConfigError(fmt::format(
      "{}: feature '{}' looks up embedding table '{}' with embedding_name_suffix {}, and so does feature '{}' of {} "
      "with embedding_name_suffix {}: the two would share one table the suffixes were meant to keep apart; rename "
      "the feature's embedding_name or change one of the suffixes",
      where, feature, table, shown(suffix), it->second.feature, it->second.where, shown(it->second.suffix)));
}

}  // namespace tzrec::embedding
