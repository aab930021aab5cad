#include "parquet/json_rows.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "base/error.h"

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
  // ISO 8601 expanded years outside 0..9999, as ECMAScript's Date.prototype.toISOString.
  if (y < 0 || y > 9999) return fmt::format("{}{:06}-{:02}-{:02}", y < 0 ? '-' : '+', y < 0 ? -y : y, m, d);
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

// Inserts the decimal point into the digits of |unscaled| for `scale` (negative scales append
// zeros).
std::string place_point(std::string digits, bool negative, int scale) {
  if (scale > 0) {
    if (static_cast<int>(digits.size()) <= scale) digits.insert(0, static_cast<size_t>(scale) + 1 - digits.size(), '0');
    digits.insert(digits.size() - static_cast<size_t>(scale), ".");
  } else if (scale < 0 && digits != "0") {
    digits.append(static_cast<size_t>(-static_cast<int64_t>(scale)), '0');
  }
  return negative ? "-" + digits : digits;
}

std::string decimal_string(__int128 unscaled, int scale) {
  bool neg = unscaled < 0;
  unsigned __int128 v = neg ? static_cast<unsigned __int128>(-(unscaled + 1)) + 1 : static_cast<unsigned __int128>(unscaled);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  } while (v != 0);
  return place_point(std::move(digits), neg, scale);
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

bool list_annotated(const SchemaNode& n) {
  return n.converted_type == ConvertedType::kList || n.logical_type.kind == LogicalType::Kind::kList;
}

bool map_annotated(const SchemaNode& n) {
  return n.converted_type == ConvertedType::kMap || n.converted_type == ConvertedType::kMapKeyValue ||
         n.logical_type.kind == LogicalType::Kind::kMap;
}

// Record assembly of one row from the leaf columns of a table, driven by the schema tree.
//
// Slots: every leaf column has max_rep + 1 slot spaces. Space 0 holds the rows; space k + 1 the
// elements of the lists of lists[k]; the last space the leaf values. A schema node with
// repetition level r lives in space r (a repeated node's instances are the elements of list level
// r - 1). All leaves under a node share the slot spaces up to the node's level, so any projected
// leaf under a node tells whether the node is present at a slot (its definition level there).
class Assembler {
 public:
  Assembler(const Table& table, const Schema& schema, const JsonOptions& options)
      : table_(table), schema_(schema), options_(options), by_leaf_(static_cast<size_t>(schema.num_columns()), nullptr),
        first_leaf_(schema.nodes().size(), -1) {
    for (const ColumnData& col : table.columns) {
      const int i = col.descriptor.index;
      if (i < 0 || i >= schema.num_columns() || schema.column(i).path_string != col.descriptor.path_string ||
          col.lists.size() != static_cast<size_t>(schema.column(i).max_rep)) {
        continue;  // not a column of this schema: printed on its own
      }
      by_leaf_[static_cast<size_t>(i)] = &col;
    }
    // First projected leaf under each node (children before parents: node indices are
    // depth-first, so walking backwards visits every child before its parent).
    const auto& nodes = schema.nodes();
    for (size_t k = nodes.size(); k-- > 0;) {
      const SchemaNode& n = nodes[k];
      if (n.is_leaf) {
        if (n.leaf_index >= 0 && by_leaf_[static_cast<size_t>(n.leaf_index)] != nullptr) first_leaf_[k] = n.leaf_index;
        continue;
      }
      for (int c : n.children) {
        if (first_leaf_[static_cast<size_t>(c)] >= 0) {
          first_leaf_[k] = first_leaf_[static_cast<size_t>(c)];
          break;
        }
      }
    }
  }

  json row(int64_t row) const {
    json obj = json::object();
    std::vector<int> done;
    for (const ColumnData& col : table_.columns) {
      const int i = col.descriptor.index;
      if (i < 0 || i >= schema_.num_columns() || by_leaf_[static_cast<size_t>(i)] != &col) {
        obj[col.descriptor.path_string] = leaf_json(col, 0, row, options_);
        continue;
      }
      // The top-level field of this leaf, printed once, where its first leaf appears.
      int field = schema_.column(i).node;
      while (schema_.nodes()[static_cast<size_t>(field)].parent > 0) field = schema_.nodes()[static_cast<size_t>(field)].parent;
      if (std::find(done.begin(), done.end(), field) != done.end()) continue;
      done.push_back(field);
      obj[node(field).name] = field_value(field, row);
    }
    return obj;
  }

 private:
  const SchemaNode& node(int k) const { return schema_.nodes()[static_cast<size_t>(k)]; }
  const ColumnData& leaf_under(int k) const {
    return *by_leaf_[static_cast<size_t>(first_leaf_[static_cast<size_t>(k)])];
  }
  bool projected(int k) const { return first_leaf_[static_cast<size_t>(k)] >= 0; }

  // The leaves of one field share their slot spaces; in a corrupt file they may not.
  static void check_slot(bool ok, const ColumnData& col) {
    if (!ok) {
      throw DataError(fmt::format("column '{}': its nesting disagrees with the other columns of field '{}'; the file "
                                  "is corrupt",
                                  col.descriptor.path_string, col.descriptor.field_name));
    }
  }

  // Whether optional, non-repeated node k (in space r = its repetition level) is present at slot s.
  bool present(int k, int64_t s) const {
    const SchemaNode& n = node(k);
    const ColumnData& col = leaf_under(k);
    const ColumnDescriptor& d = col.descriptor;
    const int r = n.rep_level;
    const int16_t prev = r == 0 ? 0 : d.repeated_def[static_cast<size_t>(r - 1)];
    int def;
    if (r < d.max_rep) {
      const ListLevel& lv = col.lists[static_cast<size_t>(r)];
      check_slot(s >= 0 && s < lv.size() && (lv.validity.empty() || lv.validity.size() == static_cast<size_t>(lv.size())) &&
                     (lv.defs.empty() || lv.defs.size() == static_cast<size_t>(lv.size())),
                 col);
      if (!lv.is_null(s)) return true;
      // Null list: with a single optional node on the way, that node is the one missing.
      def = lv.defs.empty() ? prev : lv.defs[static_cast<size_t>(s)];
    } else {
      check_slot(s >= 0 && s < col.num_values() &&
                     (col.validity.empty() || col.validity.size() == static_cast<size_t>(col.num_values())) &&
                     (col.defs.empty() || col.defs.size() == static_cast<size_t>(col.num_values())),
                 col);
      if (!col.is_null(s)) return true;
      def = col.defs.empty() ? prev : col.defs[static_cast<size_t>(s)];
    }
    return def >= n.def_level;
  }

  // Element slots [b, e) of the list at slot s of repeated node k's parent space.
  std::pair<int64_t, int64_t> elements(int k, int64_t s) const {
    const ColumnData& col = leaf_under(k);
    const ListLevel& lv = col.lists[static_cast<size_t>(node(k).rep_level - 1)];
    check_slot(s >= 0 && s < lv.size(), col);
    return {lv.offsets[static_cast<size_t>(s)], lv.offsets[static_cast<size_t>(s) + 1]};
  }

  // The value of node k's instance at slot s of its own space, ignoring its own repetition and
  // optionality (checked by the caller).
  json content(int k, int64_t s) const {
    const SchemaNode& n = node(k);
    if (n.is_leaf) {
      const ColumnData& col = leaf_under(k);
      check_slot(s >= 0 && s < col.num_values() &&
                     (col.validity.empty() || col.validity.size() == static_cast<size_t>(col.num_values())),
                 col);
      return value_to_json(col, s, options_);
    }
    json obj = json::object();
    for (int c : n.children) {
      if (projected(c)) obj[node(c).name] = field_value(c, s);
    }
    return obj;
  }

  // The value of field k at slot s of its parent's space.
  json field_value(int k, int64_t s) const {
    const SchemaNode& n = node(k);
    if (n.repetition == Repetition::kRepeated) {  // a bare repeated field: an array, never null
      json arr = json::array();
      auto [b, e] = elements(k, s);
      for (int64_t j = b; j < e; ++j) arr.push_back(annotated_value(k, j));
      return arr;
    }
    if (n.repetition == Repetition::kOptional && !present(k, s)) return nullptr;
    return annotated_value(k, s);
  }

  // The value of present node k at slot s of its own space: a LIST or MAP when annotated so,
  // else its content.
  json annotated_value(int k, int64_t s) const {
    const SchemaNode& n = node(k);
    if (!n.is_leaf && n.children.size() == 1 && node(n.children[0]).repetition == Repetition::kRepeated) {
      const int rep = n.children[0];
      const SchemaNode& r = node(rep);
      if (map_annotated(n) && !r.is_leaf && !r.children.empty() && projected(r.children[0])) {
        // MAP: key → value (null without a value field or with the value not projected).
        const int key = r.children[0];
        const int value = r.children.size() >= 2 && projected(r.children[1]) ? r.children[1] : -1;
        json m = json::object();
        auto [b, e] = elements(rep, s);
        for (int64_t j = b; j < e; ++j) {
          json kj = field_value(key, j);
          std::string ks = kj.is_string() ? kj.get<std::string>() : kj.dump();
          m[ks] = value >= 0 ? field_value(value, j) : json(nullptr);
        }
        return m;
      }
      if (list_annotated(n)) {
        // LIST: three-level (repeated group with one child, the element) or the legacy forms
        // (the repeated node is the element: a primitive, a group of several fields, or a
        // one-field group named "array" or "<list>_tuple").
        const bool three_level = !r.is_leaf && r.children.size() == 1 && r.name != "array" &&
                                 r.name != n.name + "_tuple";
        json arr = json::array();
        auto [b, e] = elements(rep, s);
        for (int64_t j = b; j < e; ++j) {
          arr.push_back(three_level ? field_value(r.children[0], j) : annotated_value(rep, j));
        }
        return arr;
      }
    }
    return content(k, s);
  }

  const Table& table_;
  const Schema& schema_;
  const JsonOptions& options_;
  std::vector<const ColumnData*> by_leaf_;
  std::vector<int> first_leaf_;
};

}  // namespace

std::string iso8601_millis(int64_t millis) {
  int64_t days = floor_div(millis, kMillisPerDay);
  int64_t ms = millis - days * kMillisPerDay;
  return fmt::format("{}T{:02}:{:02}:{:02}.{:03}Z", iso_date(days), ms / 3600000, ms / 60000 % 60, ms / 1000 % 60,
                     ms % 1000);
}

int64_t int96_to_micros(const uint8_t* value) {
  int64_t nanos;
  int32_t julian;
  std::memcpy(&nanos, value, 8);
  std::memcpy(&julian, value + 8, 4);
  // Spark's fromJulianDay: 64-bit arithmetic that wraps on overflow (computed unsigned here to
  // keep the wrap defined), nanoseconds truncated to microseconds.
  const uint64_t days = static_cast<uint64_t>(static_cast<int64_t>(julian) - kJulianDayOfEpoch);
  const uint64_t micros = days * uint64_t{86400000000} + static_cast<uint64_t>(nanos / 1000);
  return static_cast<int64_t>(micros);
}

std::string decimal_from_be_bytes(std::string_view bytes, int scale) {
  if (bytes.size() <= 16) {
    // Big-endian two's complement.
    __int128 v = bytes.empty() ? 0 : (static_cast<int8_t>(bytes[0]) < 0 ? -1 : 0);
    for (char ch : bytes) v = static_cast<__int128>((static_cast<unsigned __int128>(v) << 8) | static_cast<uint8_t>(ch));
    return decimal_string(v, scale);
  }
  // Wider than 128 bits: magnitude in base 256, then repeated division by 10.
  const bool negative = static_cast<int8_t>(bytes[0]) < 0;
  std::vector<uint8_t> mag(bytes.begin(), bytes.end());
  if (negative) {  // two's complement negation
    for (auto& b : mag) b = static_cast<uint8_t>(~b);
    for (size_t i = mag.size(); i-- > 0;) {
      if (++mag[i] != 0) break;
    }
  }
  std::string digits;
  size_t lead = 0;
  while (lead < mag.size() && mag[lead] == 0) ++lead;
  while (lead < mag.size()) {
    unsigned rem = 0;
    for (size_t i = lead; i < mag.size(); ++i) {
      unsigned cur = (rem << 8) | mag[i];
      mag[i] = static_cast<uint8_t>(cur / 10);
      rem = cur % 10;
    }
    digits.push_back(static_cast<char>('0' + rem));
    while (lead < mag.size() && mag[lead] == 0) ++lead;
  }
  if (digits.empty()) digits = "0";
  std::reverse(digits.begin(), digits.end());
  return place_point(std::move(digits), negative, scale);
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
    case PhysicalType::kInt96:
      return iso8601_millis(floor_div(int96_to_micros(column.values.data() + slot * 12), 1000));
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
      if (is_decimal) return decimal_from_be_bytes(b, scale);
      if (c.is_float16()) {
        const float v = float16_to_float(static_cast<uint16_t>(static_cast<uint8_t>(b[0]) | (static_cast<uint8_t>(b[1]) << 8)));
        if (std::isnan(v)) return nullptr;
        return static_cast<double>(v);
      }
      return std::string(b);
    }
  }
  return nullptr;
}

json row_to_json(const Table& table, const Schema& schema, int64_t row, const JsonOptions& options) {
  return Assembler(table, schema, options).row(row);
}

}  // namespace tzrec::parquet
