#include "feature/kv_map.h"

#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "feature/text_values.h"

namespace tzrec::feature {
namespace {

// The text token `v` split at its first `sep` (one byte): key, value. DataError when it has none.
// The two views are returned (in registers) for the callers to write into their vectors' room: an
// entry built on the stack with 8-byte stores and then copied into the vector with 16-byte loads
// waits for those stores to reach the cache (no store forwarding across two stores).
std::pair<std::string_view, std::string_view> split_kv_token(const CellValue& v, std::string_view sep,
                                                             const char* form, const MultiInputCells& cells,
                                                             size_t i, int64_t r, const std::string& feature) {
  static_assert(kLookupKvSep.size() == 1 && kNestedKeySep.size() == 1 && kNestedKvSep.size() == 1);
  if (v.kind != CellValue::Kind::kText) {
    throw DataError(
        fmt::format("{}: value '{}' of feature {} is a number; the {} input holds '{}' entries (text) "
                    "or is a map column",
                    cells.where(i, r), display(v), feature, cells.input(i).field, form));
  }
  const auto at = find_in_short_text(v.text, sep[0]);
  if (at == std::string_view::npos) {
    throw DataError(
        fmt::format("{}: entry '{}' of feature {} has no '{}'; the {} input holds '{}' entries — fix "
                    "the data",
                    cells.where(i, r), display(v), feature, sep, cells.input(i).field, form));
  }
  return {std::string_view(v.text.data(), at), std::string_view(v.text.data() + at + 1, v.text.size() - at - 1)};
}

// A text entry key:value at the end of *out.
void push_text_entry(std::pair<std::string_view, std::string_view> kv, std::vector<KvEntry>* out) {
  KvEntry& e = out->emplace_back();
  e.key.text = kv.first;
  e.value.text = kv.second;
}

}  // namespace

void read_lookup_map(const MultiInputCells& cells, size_t i, int64_t r, int64_t k, const std::string& feature,
                     std::vector<KvEntry>* out) {
  out->clear();
  const ColumnCells& c = cells.cells(i);
  if (!cells.input(i).sequence && c.is_map()) {
    if (!c.empty(r))
      c.for_each_entry(r, [&](const CellValue& key, const CellValue& value) { out->push_back(KvEntry{key, value}); });
    return;
  }
  cells.for_each_value(i, r, k, [&](const CellValue& v) {
    if (v.kind == CellValue::Kind::kText && v.text.empty()) return;
    push_text_entry(split_kv_token(v, kLookupKvSep, "key:value", cells, i, r, feature), out);
  });
}

void read_nested_map(const MultiInputCells& cells, size_t i, int64_t r, int64_t k, const std::string& feature,
                     std::vector<NestedEntry>* out) {
  out->clear();
  const ColumnCells& c = cells.cells(i);
  if (!cells.input(i).sequence && c.is_map()) {
    if (c.empty(r)) return;
    c.for_each_entry(r, [&](const CellValue& key, const CellValue& value) {
      if (value.kind != CellValue::Kind::kText) {
        throw DataError(fmt::format(
            "{}: value '{}' of the nested map of feature {} is a number; a map column of a nested map holds "
            "inner maps 'sk1:v1,sk2:v2' as strings",
            cells.where(i, r), display(value), feature));
      }
      out->push_back(NestedEntry{key, value.text});
    });
    return;
  }
  cells.for_each_value(i, r, k, [&](const CellValue& v) {
    if (v.kind == CellValue::Kind::kText && v.text.empty()) return;
    const auto [pkey, inner] = split_kv_token(v, kNestedKeySep, "pkey^skey:value,...", cells, i, r, feature);
    NestedEntry& e = out->emplace_back();
    e.pkey.text = pkey;
    e.inner = inner;
  });
}

void read_inner_map(std::string_view inner, const MultiInputCells& cells, size_t i, int64_t r,
                    const std::string& feature, std::vector<KvEntry>* out) {
  out->clear();
  CellValue tok;
  for_each_token(inner, kNestedInnerSep, [&](std::string_view text) {
    if (text.empty()) return;
    tok.text = text;
    push_text_entry(split_kv_token(tok, kNestedKvSep, "skey:value", cells, i, r, feature), out);
  });
}

}  // namespace tzrec::feature
