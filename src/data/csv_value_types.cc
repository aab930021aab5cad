#include "data/csv_value_types.h"

#include <charconv>

#include "parquet/writer.h"

namespace tzrec::data {

bool csv_null_text(std::string_view s) {
  static const char* const kNulls[] = {"",    "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
                                       "1.#IND", "1.#QNAN", "N/A", "NA", "NULL", "NaN", "n/a", "nan", "null"};
  for (const char* n : kNulls) {
    if (s == n) return true;
  }
  return false;
}

namespace {

template <typename T>
bool parse_whole(std::string_view s, T* out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

bool parse_csv_int64(std::string_view s, int64_t* out) { return parse_whole(s, out); }

bool parse_csv_double(std::string_view s, double* out) { return parse_whole(s, out); }

CsvValueType infer_csv_value_type(const std::vector<std::string_view>& cells) {
  bool all_int = true;
  int64_t iv;
  double dv;
  for (std::string_view s : cells) {
    if (csv_null_text(s)) continue;
    if (all_int && !parse_csv_int64(s, &iv)) all_int = false;
    if (!all_int && !parse_csv_double(s, &dv)) return CsvValueType::kString;
  }
  return all_int ? CsvValueType::kInt64 : CsvValueType::kDouble;
}

TypedColumn typed_csv_column(const StringColumn& column) {
  std::vector<std::string_view> cells;
  for (int64_t r = 0; r < column.size(); ++r) cells.push_back(column.cell(r));
  const CsvValueType type = infer_csv_value_type(cells);
  const parquet::PhysicalType physical = type == CsvValueType::kInt64    ? parquet::PhysicalType::kInt64
                                         : type == CsvValueType::kDouble ? parquet::PhysicalType::kDouble
                                                                         : parquet::PhysicalType::kByteArray;
  const parquet::Schema schema = parquet::writer_schema({parquet::WriterField{column.name, physical}});
  parquet::ColumnBuilder b(schema.column(0));
  for (std::string_view s : cells) {
    int64_t iv;
    double dv;
    if (type == CsvValueType::kString) {
      b.append_string(s);
    } else if (csv_null_text(s)) {
      b.append_null();
    } else if (type == CsvValueType::kInt64 && parse_csv_int64(s, &iv)) {
      b.append<int64_t>(iv);
    } else if (parse_csv_double(s, &dv)) {
      b.append<double>(dv);
    } else {
      b.append_null();
    }
  }
  return TypedColumn{column.name, b.finish(), std::nullopt};
}

}  // namespace tzrec::data
