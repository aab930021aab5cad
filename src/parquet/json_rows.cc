#include "parquet/json_rows.h"

#include <cmath>
#include <cstring>
#include <map>

#include <fmt/format.h>

namespace tzrec::parquet {
namespace {

using json = Json;

constexpr int64_t kJulianDayOfEpoch = 2440588;  // Julian day number of 1970-01-01
constexpr int64_t kMillisPerDay = 86400000;

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Proleptic Gregorian date of a day count since 1970-01-01.
void civil_from_days(int64_t days, int64_t* y, unsigned* m, unsigned* d) {
  days += 719468;  // shift the epoch to 0000-03-01
  const int64_t era = floor_div(days, 146097);
  const unsigned doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2 ? 1 : 0);
}

std::string iso_date(int64_t days) {
  int64_t y;
  unsigned m, d;
  civil_from_days(days, &y, &m, &d);
  return fmt::format("{:04}-{:02}-{:02}", y, m, d);
}

bool is_unsigned(const ColumnDescriptor& c) {
  if (c.logical_type.kind == LogicalType::Kind::kInteger) return !c.logical_type.is_signed;
  return c.converted_type == ConvertedType::kUint8 || c.converted_type == ConvertedType::kUint16 ||
         c.converted_type == ConvertedType::kUint32 || c.converted_type == ConvertedType::kUint64;
}

// Milliseconds per stored unit of a timestamp column, as a divisor (0: not a timestamp).
int64_t timestamp_divisor(const ColumnDescriptor& c) {
  if (c.logical_type.kind == LogicalType::Kind::kTimestamp) {
    switch (c.logical_type.unit) {
      case TimeUnit::kMillis: return 1;
      case TimeUnit::kMicros: return 1000;
      case TimeUnit::kNanos: return 1000000;
    }
  }
  if (c.converted_type == ConvertedType::kTimestampMillis) return 1;
  if (c.converted_type == ConvertedType::kTimestampMicros) return 1000;
  return 0;
}

int decimal_scale(const ColumnDescriptor& c, bool* is_decimal) {
  *is_decimal = c.logical_type.kind == LogicalType::Kind::kDecimal || c.converted_type == ConvertedType::kDecimal;
  return c.logical_type.kind == LogicalType::Kind::kDecimal ? c.logical_type.scale : c.scale;
}

std::string decimal_string(__int128 unscaled, int scale) {
  bool neg = unscaled < 0;
  unsigned __int128 v = neg ? static_cast<unsigned __int128>(-(unscaled + 1)) + 1 : static_cast<unsigned __int128>(unscaled);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  } while (v != 0);
  if (scale > 0) {
    if (static_cast<int>(digits.size()) <= scale) digits.insert(0, static_cast<size_t>(scale) + 1 - digits.size(), '0');
    digits.insert(digits.size() - static_cast<size_t>(scale), ".");
  }
  return neg ? "-" + digits : digits;
}

json leaf_json(const ColumnData& col, int64_t level, int64_t slot, const JsonOptions& options) {
  if (level == static_cast<int64_t>(col.lists.size())) return value_to_json(col, slot, options);
  const ListLevel& lv = col.lists[static_cast<size_t>(level)];
  if (lv.is_null(slot)) return nullptr;
  json arr = json::array();
  for (int64_t j = lv.offsets[static_cast<size_t>(slot)]; j < lv.offsets[static_cast<size_t>(slot) + 1]; ++j) {
    arr.push_back(leaf_json(col, level + 1, j, options));
  }
  return arr;
}

}  // namespace

std::string iso8601_millis(int64_t millis) {
  int64_t days = floor_div(millis, kMillisPerDay);
  int64_t ms = millis - days * kMillisPerDay;
  return fmt::format("{}T{:02}:{:02}:{:02}.{:03}Z", iso_date(days), ms / 3600000, ms / 60000 % 60, ms / 1000 % 60,
                     ms % 1000);
}

json value_to_json(const ColumnData& column, int64_t slot, const JsonOptions& options) {
  if (column.is_null(slot)) return nullptr;
  const ColumnDescriptor& c = column.descriptor;
  bool is_decimal = false;
  int scale = decimal_scale(c, &is_decimal);
  switch (c.type) {
    case PhysicalType::kBoolean: return column.data<uint8_t>()[slot] != 0;
    case PhysicalType::kInt32: {
      int32_t v = column.data<int32_t>()[slot];
      if (is_decimal) return decimal_string(v, scale);
      if (c.logical_type.kind == LogicalType::Kind::kDate || c.converted_type == ConvertedType::kDate) return iso_date(v);
      if (is_unsigned(c)) return static_cast<uint32_t>(v);
      return v;
    }
    case PhysicalType::kInt64: {
      int64_t v = column.data<int64_t>()[slot];
      if (is_decimal) return decimal_string(v, scale);
      if (int64_t div = timestamp_divisor(c); div > 0) return iso8601_millis(floor_div(v, div));
      if (is_unsigned(c)) {
        uint64_t u = static_cast<uint64_t>(v);
        if (options.int64_as_string) return std::to_string(u);
        return u;
      }
      if (options.int64_as_string) return std::to_string(v);
      return v;
    }
    case PhysicalType::kInt96: {
      const uint8_t* p = column.values.data() + slot * 12;
      int64_t nanos;
      int32_t julian;
      std::memcpy(&nanos, p, 8);
      std::memcpy(&julian, p + 8, 4);
      int64_t millis = (static_cast<int64_t>(julian) - kJulianDayOfEpoch) * kMillisPerDay + floor_div(nanos, 1000000);
      return iso8601_millis(millis);
    }
    case PhysicalType::kFloat: {
      float v = column.data<float>()[slot];
      if (std::isnan(v)) return nullptr;
      return static_cast<double>(v);
    }
    case PhysicalType::kDouble: {
      double v = column.data<double>()[slot];
      if (std::isnan(v)) return nullptr;
      return v;
    }
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: {
      std::string_view b = column.bytes(slot);
      if (is_decimal && b.size() <= 16) {
        // Big-endian two's complement.
        __int128 v = b.empty() ? 0 : (static_cast<int8_t>(b[0]) < 0 ? -1 : 0);
        for (char ch : b) v = (v << 8) | static_cast<uint8_t>(ch);
        return decimal_string(v, scale);
      }
      return std::string(b);
    }
  }
  return nullptr;
}

json row_to_json(const Table& table, const Schema& schema, int64_t row, const JsonOptions& options) {
  json obj = json::object();
  // Group the table's leaves by top-level field, keeping the table's order.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const ColumnData*>> by_field;
  for (const auto& col : table.columns) {
    auto& v = by_field[col.descriptor.field_name];
    if (v.empty()) order.push_back(col.descriptor.field_name);
    v.push_back(&col);
  }
  for (const auto& name : order) {
    const auto& cols = by_field[name];
    int field = schema.find_field(name);
    FieldKind kind = field >= 0 ? schema.field_kind(field) : FieldKind::kOther;
    if (cols.size() == 1 && (kind == FieldKind::kPrimitive || kind == FieldKind::kList)) {
      obj[name] = leaf_json(*cols[0], 0, row, options);
      continue;
    }
    if (kind == FieldKind::kMap && cols.size() == 2 && cols[0]->lists.size() == 1 && cols[1]->lists.size() == 1) {
      const ListLevel& lv = cols[0]->lists[0];
      if (lv.is_null(row)) {
        obj[name] = nullptr;
        continue;
      }
      json m = json::object();
      for (int64_t j = lv.offsets[static_cast<size_t>(row)]; j < lv.offsets[static_cast<size_t>(row) + 1]; ++j) {
        json k = value_to_json(*cols[0], j, options);
        std::string key = k.is_string() ? k.get<std::string>() : k.dump();
        m[key] = value_to_json(*cols[1], j, options);
      }
      obj[name] = std::move(m);
      continue;
    }
    // Structs and other shapes: one entry per leaf, keyed by the path below the field.
    json sub = json::object();
    for (const ColumnData* col : cols) {
      std::string key = col->descriptor.path_string.substr(std::min(name.size() + 1, col->descriptor.path_string.size()));
      sub[key.empty() ? name : key] = col->lists.empty() ? value_to_json(*col, row, options) : leaf_json(*col, 0, row, options);
    }
    obj[name] = std::move(sub);
  }
  return obj;
}

}  // namespace tzrec::parquet
