// Test-only helper for feature/ unit tests: record batches of typed (Parquet-shaped) columns.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "data/record_batch.h"
#include "parquet/writer.h"

namespace tzrec::feature::testing {

using parquet::ColumnBuilder;
using parquet::PhysicalType;

inline parquet::ColumnDescriptor descriptor(const std::string& name, PhysicalType type, int max_rep) {
  parquet::ColumnDescriptor d;
  d.path = {name};
  d.path_string = name;
  d.field_name = name;
  d.type = type;
  d.max_rep = static_cast<int16_t>(max_rep);
  d.list_nullable.assign(static_cast<size_t>(max_rep), true);
  d.leaf_nullable = true;
  if (type == PhysicalType::kByteArray) d.logical_type.kind = parquet::LogicalType::Kind::kString;
  return d;
}

// A batch of typed columns read from "t.parquet" (rows 0, 1, ...).
struct TypedBatch {
  data::RecordBatch batch;
  int64_t rows = 0;

  explicit TypedBatch(int64_t n) : rows(n) {
    batch.files = {"t.parquet"};
    batch.origin_unit = "row";
    for (int64_t r = 0; r < n; ++r) batch.origins.push_back(data::RowOrigin{0, r});
  }
  // fill(builder, row) appends one row.
  TypedBatch& add(const std::string& name, PhysicalType type, int max_rep,
                  const std::function<void(ColumnBuilder&, int64_t)>& fill) {
    ColumnBuilder b(descriptor(name, type, max_rep));
    for (int64_t r = 0; r < rows; ++r) fill(b, r);
    batch.typed_columns.push_back(data::TypedColumn{name, b.finish(), std::nullopt});
    return *this;
  }
  // map<K, V> from per-row entries (nullopt row: a null map).
  template <typename K, typename V>
  TypedBatch& add_map(const std::string& name, PhysicalType kt, PhysicalType vt,
                      const std::vector<std::optional<std::vector<std::pair<K, V>>>>& rows_) {
    ColumnBuilder keys(descriptor(name + ".key_value.key", kt, 1));
    ColumnBuilder vals(descriptor(name + ".key_value.value", vt, 1));
    for (const auto& row : rows_) {
      if (!row) {
        keys.append_null_list();
        vals.append_null_list();
        continue;
      }
      keys.begin_list();
      vals.begin_list();
      for (const auto& [k, v] : *row) {
        if constexpr (std::is_same_v<K, std::string>) {
          keys.append_string(k);
        } else {
          keys.append(k);
        }
        if constexpr (std::is_same_v<V, std::string>) {
          vals.append_string(v);
        } else {
          vals.append(v);
        }
      }
      keys.end_list();
      vals.end_list();
    }
    batch.typed_columns.push_back(data::TypedColumn{name, keys.finish(), vals.finish()});
    return *this;
  }
};

}  // namespace tzrec::feature::testing
