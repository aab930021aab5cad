// The maps read by lookup_feature and match_feature (docs/tzrec-compatibility.md §5.5):
//
//   lookup map    text "k1:v1\x1dk2:v2" (entries split by "\x1d", fixed; key and value split at the
//                 entry's first ':'), list<string> elements "k:v", or a typed map<K, V> column
//                 (K string or integer; V integer, float or string)
//   nested map    text "pk1^sk1:v1,sk2:v2|pk2^sk3:v3" (outer entries split by '|', the primary key
//                 at the entry's first '^', inner entries split by ',', the secondary key at the
//                 inner entry's first ':'; all fixed), or a typed map<K, string> whose values are
//                 inner maps "sk1:v1,sk2:v2"
//
// Empty entries (",,", a trailing separator) are skipped; a non-empty entry without its key
// separator is a DataError naming file, row, column and feature.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "feature/column_cells.h"
#include "feature/multi_input.h"

namespace tzrec::feature {

inline constexpr std::string_view kLookupEntrySep = "\x1d";
inline constexpr std::string_view kLookupKvSep = ":";
inline constexpr std::string_view kNestedOuterSep = "|";
inline constexpr std::string_view kNestedKeySep = "^";
inline constexpr std::string_view kNestedInnerSep = ",";
inline constexpr std::string_view kNestedKvSep = ":";

struct KvEntry {
  CellValue key;
  CellValue value;
};

struct NestedEntry {
  CellValue pkey;
  std::string_view inner;  // "sk1:v1,sk2:v2"
};

// The entries of lookup map input i at row r (item k of a sequence input) into *out (cleared).
// `feature`: the feature's name, for messages.
void read_lookup_map(const MultiInputCells& cells, size_t i, int64_t r, int64_t k, const std::string& feature,
                     std::vector<KvEntry>* out);

// The outer entries of nested map input i at row r (item k of a sequence input) into *out.
void read_nested_map(const MultiInputCells& cells, size_t i, int64_t r, int64_t k, const std::string& feature,
                     std::vector<NestedEntry>* out);

// The entries of one inner map "sk1:v1,sk2:v2" of input i at row r into *out (cleared).
void read_inner_map(std::string_view inner, const MultiInputCells& cells, size_t i, int64_t r,
                    const std::string& feature, std::vector<KvEntry>* out);

// A key looked up among a map's entries: equal to an entry's key when their texts are equal
// (integers as decimal text, floats in their shortest round-trip form; two integers compare as
// integers). The key's text is formed once, and a text entry key — the usual case, split from
// the map's text — is compared inline, with no formatting or library call per entry.
class MapKey {
 public:
  explicit MapKey(const CellValue& key) : key_(key), text_(as_text(key, &number_)) {}
  MapKey(const MapKey&) = delete;  // text_ may point into number_
  MapKey& operator=(const MapKey&) = delete;

  bool matches(const CellValue& entry_key) const {
    if (entry_key.kind == CellValue::Kind::kText) return equal_short_text(entry_key.text, text_);
    if (entry_key.kind == CellValue::Kind::kInt && key_.kind == CellValue::Kind::kInt) return entry_key.i == key_.i;
    NumberText entry_text;
    return as_text(entry_key, &entry_text) == text_;
  }

 private:
  CellValue key_;
  NumberText number_;
  std::string_view text_;
};

}  // namespace tzrec::feature
