#include "parquet/column_slice.h"

#include <cstring>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::parquet {
namespace {

// Appends validity entries [b, e) of `src` (empty = all valid) to `dst`, which already holds
// `dst_size` entries (empty = all valid).
void append_validity(const std::vector<uint8_t>& src, int64_t b, int64_t e, int64_t dst_size,
                     std::vector<uint8_t>* dst) {
  if (src.empty() && dst->empty()) return;
  if (dst->empty()) dst->assign(static_cast<size_t>(dst_size), 1);
  if (src.empty()) {
    dst->insert(dst->end(), static_cast<size_t>(e - b), 1);
  } else {
    dst->insert(dst->end(), src.begin() + b, src.begin() + e);
  }
}

// Appends definition levels [b, e) of `src` (kept only for some columns; see ColumnDescriptor).
void append_defs(const std::vector<int16_t>& src, int64_t b, int64_t e, std::vector<int16_t>* dst) {
  if (src.empty()) return;
  dst->insert(dst->end(), src.begin() + b, src.begin() + e);
}

// Appends offsets (b, e] of `src`, rebased so that src[b] maps to dst->back().
void append_offsets(const std::vector<int64_t>& src, int64_t b, int64_t e, std::vector<int64_t>* dst) {
  const int64_t shift = dst->back() - src[static_cast<size_t>(b)];
  const size_t old = dst->size();
  dst->resize(old + static_cast<size_t>(e - b));
  int64_t* out = dst->data() + old;
  const int64_t* in = src.data() + b + 1;
  for (int64_t i = 0; i < e - b; ++i) out[i] = in[i] + shift;
}

}  // namespace

void append_rows(const ColumnData& src, int64_t begin, int64_t end, ColumnData* dst) {
  if (begin < 0 || begin > end || end > src.num_rows) {
    throw UsageError(fmt::format("append_rows: rows [{}, {}) are not inside column '{}' of {} rows", begin, end,
                                 src.name(), src.num_rows));
  }
  if (src.type() != dst->type() || src.value_width() != dst->value_width() || src.lists.size() != dst->lists.size()) {
    throw DataError(fmt::format(
        "column '{}' has type {} with {} list levels in one file but {} with {} list levels in another; all input "
        "files must have the same column types",
        src.name(), to_string(src.type()), src.lists.size(), to_string(dst->type()), dst->lists.size()));
  }
  int64_t b = begin, e = end;
  for (size_t k = 0; k < src.lists.size(); ++k) {
    const ListLevel& s = src.lists[k];
    ListLevel& d = dst->lists[k];
    if (d.offsets.empty()) d.offsets.push_back(0);
    const int64_t dst_size = d.size();
    append_validity(s.validity, b, e, dst_size, &d.validity);
    append_defs(s.defs, b, e, &d.defs);
    append_offsets(s.offsets, b, e, &d.offsets);
    b = s.offsets[static_cast<size_t>(b)];
    e = s.offsets[static_cast<size_t>(e)];
  }
  // Leaf slots [b, e).
  append_validity(src.validity, b, e, dst->num_values(), &dst->validity);
  append_defs(src.defs, b, e, &dst->defs);
  if (src.type() == PhysicalType::kByteArray) {
    if (dst->offsets.empty()) dst->offsets.push_back(0);
    const int64_t vb = src.offsets[static_cast<size_t>(b)];
    const int64_t ve = src.offsets[static_cast<size_t>(e)];
    append_offsets(src.offsets, b, e, &dst->offsets);
    dst->values.append(src.values.data() + vb, static_cast<size_t>(ve - vb));
  } else {
    const size_t w = static_cast<size_t>(src.value_width());
    dst->values.append(src.values.data() + static_cast<size_t>(b) * w, static_cast<size_t>(e - b) * w);
  }
  dst->num_rows += end - begin;
}

ColumnData slice_rows(const ColumnData& src, int64_t begin, int64_t end) {
  ColumnData out = empty_column(src.descriptor);
  append_rows(src, begin, end, &out);
  return out;
}

}  // namespace tzrec::parquet
