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

// The codes of a text cell joined by ',' appended to `out`; false (nothing kept) when a token is
// not an integer.
bool parse_text_row(std::string_view cell, std::vector<int64_t>* out) {
  const size_t mark = out->size();
  size_t start = 0;
  while (true) {
    const size_t comma = cell.find(',', start);
    const std::string_view token = cell.substr(start, comma == std::string_view::npos ? cell.size() - start : comma - start);
    int64_t v = 0;
    if (!parse_python_int(token, &v)) {
      out->resize(mark);
      return false;
    }
    out->push_back(v);
    if (comma == std::string_view::npos) return true;
    start = comma + 1;
  }
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

SidCodeLists decode_sid_code_lists(const data::RecordBatch& batch, const std::string& field) {
  SidCodeLists lists;
  const int64_t n = batch.num_rows();
  lists.valid.assign(static_cast<size_t>(n), 0);
  auto finish_row = [&](int64_t r, bool ok, size_t mark) {
    if (!ok) lists.values.resize(mark);
    lists.valid[static_cast<size_t>(r)] = ok ? 1 : 0;
    lists.offsets.push_back(static_cast<int64_t>(lists.values.size()));
  };
  auto where = [&] { return batch.files.empty() ? std::string("the input") : batch.files.front(); };

  if (const int text = batch.column_index(field); text >= 0) {
    const data::StringColumn& column = batch.columns[static_cast<size_t>(text)];
    for (int64_t r = 0; r < n; ++r) {
      const size_t mark = lists.values.size();
      finish_row(r, parse_text_row(column.cell(r), &lists.values), mark);
    }
    return lists;
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
  for (int64_t r = 0; r < n; ++r) {
    const size_t mark = lists.values.size();
    bool ok = false;
    if (typed->list_depth() == 1) {
      const parquet::ListLevel& level = c.lists[0];
      if (!level.is_null(r)) {
        ok = true;
        for (int64_t s = level.offsets[static_cast<size_t>(r)]; s < level.offsets[static_cast<size_t>(r) + 1] && ok; ++s) {
          int64_t v = 0;
          ok = !c.is_null(s) && integer_value(c, s, unsigned64, &v);
          lists.values.push_back(v);
        }
      }
    } else if (!c.is_null(r)) {  // scalars: one code, or a text cell
      int64_t v = 0;
      if (type == PhysicalType::kByteArray) {
        ok = parse_text_row(c.bytes(r), &lists.values);
      } else if (integer_leaf) {
        ok = integer_value(c, r, unsigned64, &v);
        lists.values.push_back(v);
      } else if (type == PhysicalType::kDouble || type == PhysicalType::kFloat) {
        ok = whole_number(type == PhysicalType::kDouble ? c.data<double>()[r] : c.data<float>()[r], &v);
        lists.values.push_back(v);
      }
    }
    finish_row(r, ok, mark);
  }
  return lists;
}

SidCodeRows decode_sid_codes(const data::RecordBatch& batch, const std::string& field, int64_t num_layers) {
  const SidCodeLists lists = decode_sid_code_lists(batch, field);
  SidCodeRows rows;
  rows.num_layers = num_layers;
  const int64_t n = static_cast<int64_t>(lists.valid.size());
  rows.values.assign(static_cast<size_t>(n * num_layers), 0);
  rows.valid.assign(static_cast<size_t>(n), 0);
  for (int64_t r = 0; r < n; ++r) {
    const int64_t b = lists.offsets[static_cast<size_t>(r)], e = lists.offsets[static_cast<size_t>(r) + 1];
    if (!lists.valid[static_cast<size_t>(r)] || e - b != num_layers) continue;
    std::copy(lists.values.begin() + b, lists.values.begin() + e, rows.values.begin() + r * num_layers);
    rows.valid[static_cast<size_t>(r)] = 1;
  }
  return rows;
}

int64_t first_code_out_of_range(const int64_t* codes, const std::vector<int64_t>& codebook) {
  for (size_t l = 0; l < codebook.size(); ++l) {
    if (codes[l] < 0 || codes[l] >= codebook[l]) return static_cast<int64_t>(l);
  }
  return -1;
}

std::string sid_row_problem(const SidCodeRows& rows, int64_t r, const std::vector<int64_t>& codebook) {
  if (!rows.valid[static_cast<size_t>(r)]) {
    return fmt::format("does not hold {} integer codes (null, a null code, another count or a non-integer)",
                       codebook.size());
  }
  const int64_t l = first_code_out_of_range(rows.row(r), codebook);
  if (l < 0) return "";
  return fmt::format("code {} of layer {} is outside its codebook [0, {})", rows.row(r)[l], l,
                     codebook[static_cast<size_t>(l)]);
}

}  // namespace tzrec::retrieval
