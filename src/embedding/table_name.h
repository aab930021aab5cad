// The name of the table a sparse feature looks up in a feature group (docs/tzrec-compatibility.md
// §5.7), composed as TorchEasyRec composes it, and its check that embedding_name_suffix never
// merges tables meant to be separate.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "embedding/embedding_config.h"

namespace tzrec::embedding {

// The feature's embedding_name, or "{feature}_emb" when it has none: the table's name before a
// group adds anything, and what the feature's embedding_constraints name.
std::string base_table_name(const FeatureSpec& f);

// base_table_name(f), then "_wide" in a WIDE group, then "_<suffix>" when the group has an
// embedding_name_suffix (e.g. "cat_a_emb_wide_tower_a").
std::string group_table_name(const FeatureSpec& f, bool wide, const std::string& suffix);

// One table name reached from groups with different embedding_name_suffix values (one group's
// suffixed name equal to another's unsuffixed one, say) would silently share a table the suffix
// was meant to keep apart: TorchEasyRec refuses it, and so does this check.
class TableSuffixCheck {
 public:
  // Records that feature `feature` of the group at `where` (a config path) looks up `table` under
  // `suffix` (empty: none). Throws ConfigError naming both groups when another group reached the
  // same table under another suffix.
  void add(const std::string& table, const std::string& suffix, const std::string& feature, const std::string& where);

 private:
  struct FirstUse {
    std::string suffix, feature, where;
  };
  std::map<std::string, FirstUse> first_;  // table → its first use
};

}  // namespace tzrec::embedding
