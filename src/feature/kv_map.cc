#include "feature/kv_map.h"

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::feature {
namespace {

// Splits the text token `v` at its first `sep` into *e; DataError when it has none.
void split_kv_token(const CellValue& v, std::string_view sep, const char* form, const MultiInputCells& cells, size_t i,
                    int64_t r, const std::string& feature, KvEntry* e) {
  if (v.kind != CellValue::Kind::kText) {
    throw DataError(
        fmt::format("{}: value '{}' of feature {} is a number; the {} input holds '{}' entries (text) "
                    "or is a map column",
                    cells.where(i, r), display(v), feature, cells.input(i).field, form));
  }
  const auto at = v.text.find(sep);
  if (at == std::string_view::npos) {
    throw DataError(
        fmt::format("{}: entry '{}' of feature {} has no '{}'; the {} input holds '{}' entries — fix "
                    "the data",
                    cells.where(i, r), display(v), feature, sep, cells.input(i).field, form));
  }
  e->key = CellValue();
  e->key.text = v.text.substr(0, at);
  e->value = CellValue();
  e->value.text = v.text.substr(at + sep.size());
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
  KvEntry e;
  cells.for_each_value(i, r, k, [&](const CellValue& v) {
    if (v.kind == CellValue::Kind::kText && v.text.empty()) return;
    split_kv_token(v, kLookupKvSep, "key:value", cells, i, r, feature, &e);
    out->push_back(e);
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
  KvEntry e;
  cells.for_each_value(i, r, k, [&](const CellValue& v) {
    if (v.kind == CellValue::Kind::kText && v.text.empty()) return;
    split_kv_token(v, kNestedKeySep, "pkey^skey:value,...", cells, i, r, feature, &e);
    out->push_back(NestedEntry{e.key, e.value.text});
  });
}

void read_inner_map(std::string_view inner, const MultiInputCells& cells, size_t i, int64_t r,
                    const std::string& feature, std::vector<KvEntry>* out) {
  out->clear();
  KvEntry e;
  CellValue tok;
  size_t start = 0;
  while (start <= inner.size()) {
    const size_t pos = inner.find(kNestedInnerSep, start);
    tok.text = inner.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start);
    if (!tok.text.empty()) {
      split_kv_token(tok, kNestedKvSep, "skey:value", cells, i, r, feature, &e);
      out->push_back(e);
    }
    if (pos == std::string_view::npos) break;
    start = pos + kNestedInnerSep.size();
  }
}

}  // namespace tzrec::feature
