#include "data/typed_rows.h"

#include "parquet/column_slice.h"

namespace tzrec::data {
namespace {

parquet::ColumnData take(const parquet::ColumnData& src, int64_t prefix, const std::vector<int64_t>& picks) {
  parquet::ColumnData out = parquet::slice_rows(src, 0, prefix);
  for (int64_t p : picks) parquet::append_rows(src, p, p + 1, &out);
  return out;
}

}  // namespace

TypedColumn take_rows(const TypedColumn& column, int64_t prefix, const std::vector<int64_t>& picks) {
  TypedColumn out;
  out.name = column.name;
  out.values = take(column.values, prefix, picks);
  if (column.map_values) out.map_values = take(*column.map_values, prefix, picks);
  return out;
}

StringColumn take_rows(const StringColumn& column, int64_t prefix, const std::vector<int64_t>& picks) {
  StringColumn out;
  out.name = column.name;
  out.bytes.assign(column.bytes, 0, static_cast<size_t>(column.offsets[prefix]));
  out.offsets.assign(column.offsets.begin(), column.offsets.begin() + prefix + 1);
  for (int64_t p : picks) out.append(column.cell(p));
  return out;
}

}  // namespace tzrec::data
