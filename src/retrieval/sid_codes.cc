#include "retrieval/sid_codes.h"

#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::retrieval {
namespace {

using parquet::ColumnData;
using parquet::PhysicalType;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// Whether an integer leaf is unsigned 64-bit (its values above INT64_MAX do not fit).
bool unsigned_64(const parquet::ColumnDescriptor& d) {
  if (d.logical_type.kind == parquet::LogicalType::Kind::kInteger) return !d.logical_type.is_signed;
  return d.converted_type == parquet::ConvertedType::kUint64;
}

// One integer leaf value as int64: false when an unsigned 64-bit value does not fit.
bool integer_value(const ColumnData& c, int64_t slot, bool unsigned64, int64_t* out) {
  if (c.type() == PhysicalType::kInt32) {
    *out = c.data<int32_t>()[slot];
    if (c.descriptor.logical_type.kind == parquet::LogicalType::Kind::kInteger && !c.descriptor.logical_type.is_signed) {
      *out = static_cast<uint32_t>(*out);
    }
    return true;
  }
  const int64_t v = c.data<int64_t>()[slot];
  if (unsigned64 && v < 0) return false;
  *out = v;
  return true;
}

// A whole number within int64 (what Arrow's cast of the float to text reads back as).
bool whole_number(double d, int64_t* out) {
  if (!std::isfinite(d) || d != std::floor(d) || d < -9.2233720368547758e18 || d >= 9.2233720368547758e18) return false;
  *out = static_cast<int64_t>(d);
  return true;
}

// The codes of a text cell joined by ','.
bool parse_text_row(std::string_view cell, int64_t num_layers, int64_t* out) {
  int64_t n = 0;
  size_t start = 0;
  while (true) {
    const size_t comma = cell.find(',', start);
    const std::string_view token = cell.substr(start, comma == std::string_view::npos ? cell.size() - start : comma - start);
    if (n == num_layers || !parse_python_int(token, &out[n])) return false;
    ++n;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return n == num_layers;
}

}  // namespace

bool parse_python_int(std::string_view text, int64_t* out) {
  size_t b = 0, e = text.size();
  while (b < e && is_space(text[b])) ++b;
  while (e > b && is_space(text[e - 1])) --e;
  if (b == e) return false;
  bool negative = false;
  if (text[b] == '+' || text[b] == '-') {
    negative = text[b] == '-';
    ++b;
  }
  if (b == e) return false;
  // Magnitude up to 2^63 (the most negative int64), digits with single '_' between them.
  const uint64_t limit = negative ? uint64_t{1} << 63 : static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t magnitude = 0;
  bool previous_digit = false;
  for (size_t i = b; i < e; ++i) {
    const char c = text[i];
    if (c == '_') {
      if (!previous_digit || i + 1 == e) return false;
      previous_digit = false;
      continue;
    }
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (magnitude > (limit - d) / 10) return false;
    magnitude = magnitude * 10 + d;
    previous_digit = true;
  }
  *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

SidCodeRows decode_sid_codes(const data::RecordBatch& batch, const std::string& field, int64_t num_layers) {
  SidCodeRows rows;
  rows.num_layers = num_layers;
  const int64_t n = batch.num_rows();
  rows.values.assign(static_cast<size_t>(n * num_layers), 0);
  rows.valid.assign(static_cast<size_t>(n), 0);
  auto where = [&] { return batch.files.empty() ? std::string("the input") : batch.files.front(); };

  if (const int text = batch.column_index(field); text >= 0) {
    const data::StringColumn& column = batch.columns[static_cast<size_t>(text)];
    for (int64_t r = 0; r < n; ++r) {
      int64_t* out = rows.values.data() + r * num_layers;
      if (parse_text_row(column.cell(r), num_layers, out)) {
        rows.valid[static_cast<size_t>(r)] = 1;
      } else {
        std::fill(out, out + num_layers, 0);
      }
    }
    return rows;
  }
  const data::TypedColumn* typed = batch.typed_column(field);
  if (typed == nullptr) throw DataError(fmt::format("{}: no column '{}'", where(), field));
  const ColumnData& c = typed->values;
  const PhysicalType type = c.type();
  const bool integer_leaf = type == PhysicalType::kInt32 || type == PhysicalType::kInt64;
  if (typed->is_map() || typed->list_depth() > 1 || (typed->list_depth() == 1 && !integer_leaf)) {
    const std::string element = typed->is_map()            ? "map entries"
                                : typed->list_depth() > 1   ? "lists"
                                : c.descriptor.is_string() ? "strings"
                                                            : parquet::to_string(type);
    throw DataError(fmt::format("{}: column '{}' is a list of {}; SID codes must be integers (list<int32> or "
                                "list<int64>, or text such as \"1,2,3\")",
                                where(), field, element));
  }
  const bool unsigned64 = integer_leaf && unsigned_64(c.descriptor);
  if (typed->list_depth() == 1) {
    const parquet::ListLevel& lists = c.lists[0];
    for (int64_t r = 0; r < n; ++r) {
      if (lists.is_null(r)) continue;
      const int64_t begin = lists.offsets[static_cast<size_t>(r)], end = lists.offsets[static_cast<size_t>(r) + 1];
      if (end - begin != num_layers) continue;
      int64_t* out = rows.values.data() + r * num_layers;
      bool ok = true;
      for (int64_t s = begin; s < end && ok; ++s) ok = !c.is_null(s) && integer_value(c, s, unsigned64, &out[s - begin]);
      if (ok) {
        rows.valid[static_cast<size_t>(r)] = 1;
      } else {
        std::fill(out, out + num_layers, 0);
      }
    }
    return rows;
  }
  // Scalars: one code per row, or a text cell.
  for (int64_t r = 0; r < n; ++r) {
    if (c.is_null(r)) continue;
    int64_t* out = rows.values.data() + r * num_layers;
    bool ok = false;
    if (type == PhysicalType::kByteArray) {
      ok = parse_text_row(c.bytes(r), num_layers, out);
    } else if (num_layers == 1 && integer_leaf) {
      ok = integer_value(c, r, unsigned64, out);
    } else if (num_layers == 1 && type == PhysicalType::kDouble) {
      ok = whole_number(c.data<double>()[r], out);
    } else if (num_layers == 1 && type == PhysicalType::kFloat) {
      ok = whole_number(c.data<float>()[r], out);
    }
    if (ok) {
      rows.valid[static_cast<size_t>(r)] = 1;
    } else {
      std::fill(out, out + num_layers, 0);
    }
  }
  return rows;
}

}  // namespace tzrec::retrieval
