#include "feature/column_cells.h"

#include <cmath>

#include "base/error.h"
#include "feature/text_values.h"

namespace tzrec::feature {
namespace {

using parquet::PhysicalType;

// Kind of a typed leaf, or nullopt-like kText for strings; throws for unusable leaf types.
CellValue::Kind leaf_kind_of(const parquet::ColumnData& c, const std::string& where) {
  switch (c.type()) {
    case PhysicalType::kInt32:
    case PhysicalType::kInt64:
    case PhysicalType::kBoolean:
      return CellValue::Kind::kInt;
    case PhysicalType::kFloat:
    case PhysicalType::kDouble:
      return CellValue::Kind::kFloat;
    case PhysicalType::kByteArray:
      return CellValue::Kind::kText;
    default:
      throw DataError(fmt::format(
          "{} has Parquet type {}; features read int32/int64/float/double/string values, lists "
          "and maps of them",
          where, parquet::to_string(c.type())));
  }
}

bool is_unsigned32(const parquet::ColumnDescriptor& d) {
  if (d.type != PhysicalType::kInt32) return false;
  if (d.logical_type.kind == parquet::LogicalType::Kind::kInteger) return !d.logical_type.is_signed;
  return d.converted_type == parquet::ConvertedType::kUint32 ||
         d.converted_type == parquet::ConvertedType::kUint16 ||
         d.converted_type == parquet::ConvertedType::kUint8;
}

}  // namespace

ColumnCells::ColumnCells(const data::RecordBatch& batch, const std::string& name,
                         const std::string& user, bool sequence, bool kv_map)
    : name_(name), batch_(&batch) {
  const int c = batch.column_index(name);
  if (c >= 0) {
    text_ = &batch.columns[static_cast<size_t>(c)];
    return;
  }
  typed_ = batch.typed_column(name);
  if (!typed_) {
    throw DataError(fmt::format(
        "input batch has no column '{}' (needed by {}); the reader must read "
        "FeatureParser::input_columns()",
        name, user));
  }
  const std::string where = fmt::format("column {} (needed by {})", name, user);
  if (sequence && typed_->map_values) {
    throw DataError(fmt::format("{} is a map; sequence features read strings, list<...> or list<list<...>> columns",
                                where));
  }
  if (sequence && typed_->list_depth() == 0 && typed_->values.type() != parquet::PhysicalType::kByteArray) {
    throw DataError(fmt::format("{}{} is {}, one number per row; sequence features read strings (items joined by "
                                "the sequence_delim), list<...> or list<list<...>> columns",
                                batch.num_rows() > 0 ? batch.describe_row(0) + " " : "", where, describe_type()));
  }
  if (typed_->list_depth() > 1 && !sequence) {
    throw DataError(fmt::format(
        "{} is a list of lists; only sequence features take list<list<...>> columns — use a "
        "list or scalar column for this feature",
        where));
  }
  leaf_kind_ = leaf_kind_of(typed_->values, where);
  unsigned32_ = is_unsigned32(typed_->values.descriptor);
  if (typed_->map_values) {
    const auto vk = leaf_kind_of(*typed_->map_values, where + " (map values)");
    map_unsigned32_ = is_unsigned32(typed_->map_values->descriptor);
    if (vk == CellValue::Kind::kText && !kv_map) {
      throw DataError(fmt::format(
          "{} is a map with string values; map columns feed weighted features and need numeric "
          "values (the weights)",
          where));
    }
    if (leaf_kind_ == CellValue::Kind::kFloat) {
      throw DataError(fmt::format("{} is a map with float keys; map keys must be ids or strings",
                                  where));
    }
  }
}

std::string ColumnCells::describe_type() const {
  if (text_) return "text";
  auto leaf = [](const parquet::ColumnData& c) {
    if (c.type() == PhysicalType::kByteArray) return std::string("string");
    return std::string(parquet::to_string(c.type()));
  };
  if (typed_->map_values) {
    return fmt::format("Parquet map<{}, {}>", leaf(typed_->values), leaf(*typed_->map_values));
  }
  std::string t = leaf(typed_->values);
  for (int k = 0; k < typed_->list_depth(); ++k) t = "list<" + t + ">";
  return "Parquet " + t;
}

std::string ColumnCells::where(int64_t row) const {
  return batch_->describe_row(row) + " column " + name_;
}

double ColumnCells::number(const parquet::ColumnData& c, int64_t slot) {
  switch (c.type()) {
    case PhysicalType::kInt64:
      return static_cast<double>(c.data<int64_t>()[slot]);
    case PhysicalType::kInt32:
      return c.data<int32_t>()[slot];
    case PhysicalType::kBoolean:
      return c.data<uint8_t>()[slot];
    case PhysicalType::kFloat:
      return c.data<float>()[slot];
    default:
      return c.data<double>()[slot];
  }
}

bool as_int64(const CellValue& v, int64_t* out) {
  switch (v.kind) {
    case CellValue::Kind::kInt:
      *out = v.i;
      return true;
    case CellValue::Kind::kFloat:
      // Only values that are exactly integers (a cast that would truncate is refused).
      if (!std::isfinite(v.d) || std::trunc(v.d) != v.d || std::fabs(v.d) > 9.0e18) return false;
      *out = static_cast<int64_t>(v.d);
      return true;
    default:
      return parse_int64(v.text, out);
  }
}

std::string_view as_text(const CellValue& v, NumberText* tmp) {
  if (v.kind == CellValue::Kind::kText) return v.text;
  char* const begin = tmp->bytes;
  const auto r = v.kind == CellValue::Kind::kInt ? std::to_chars(begin, begin + sizeof(tmp->bytes), v.i)
                                                 : std::to_chars(begin, begin + sizeof(tmp->bytes), v.d);
  return std::string_view(begin, static_cast<size_t>(r.ptr - begin));
}

std::string_view as_text(const CellValue& v, std::string* buf) {
  if (v.kind == CellValue::Kind::kText) return v.text;
  NumberText tmp;
  buf->assign(as_text(v, &tmp));
  return *buf;
}

std::string display(const CellValue& v) {
  std::string buf;
  const std::string_view t = as_text(v, &buf);
  std::string out;
  for (char c : t.substr(0, 64)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? fmt::format("\\x{:02x}", u) : std::string(1, c);
  }
  if (t.size() > 64) out += "...";
  return out;
}

void append_cell_text(const ColumnCells& cells, int64_t r, const std::string& list_sep, std::string* buf,
                      data::StringColumn* out) {
  if (cells.empty(r)) {
    out->append("");
    return;
  }
  if (cells.is_scalar()) {
    out->append(as_text(cells.scalar(r), buf));
    return;
  }
  std::string joined, value;
  bool first = true;
  cells.for_each(r, list_sep, [&](const CellValue& v) {
    if (!first) joined += list_sep;
    first = false;
    joined += as_text(v, &value);
  });
  out->append(joined);
}

}  // namespace tzrec::feature
