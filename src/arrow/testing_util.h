// Helpers shared by the arrow tests (header-only, test binaries only).
#pragma once

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "arrow/batch.h"
#include "arrow/flatbuffer.h"
#include "parquet/column_data.h"
#include "parquet/testing_util.h"

namespace tzrec::arrow::testing {

using json = nlohmann::ordered_json;

inline std::string data_dir() { return std::string(TZREC_SOURCE_DIR) + "/tests/data/arrow"; }

using parquet::testing::read_file;
using parquet::testing::write_file;

// A float in the conventions of tests/data/arrow/expected (NaN and infinities as strings).
inline json number_json(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

// One leaf slot as tests/data/arrow/tools/write_files.mjs writes values: INT64 as decimal strings
// (unsigned when annotated so), other numbers as numbers, byte arrays as strings.
inline json leaf_json(const parquet::ColumnData& c, int64_t slot) {
  if (c.is_null(slot)) return nullptr;
  const auto& d = c.descriptor;
  const bool is_unsigned =
      d.logical_type.kind == parquet::LogicalType::Kind::kInteger && !d.logical_type.is_signed;
  switch (c.type()) {
    case parquet::PhysicalType::kBoolean: return c.data<uint8_t>()[slot] != 0;
    case parquet::PhysicalType::kInt32:
      return is_unsigned ? json(static_cast<uint32_t>(c.data<int32_t>()[slot]))
                         : json(c.data<int32_t>()[slot]);
    case parquet::PhysicalType::kInt64:
      return is_unsigned ? std::to_string(static_cast<uint64_t>(c.data<int64_t>()[slot]))
                         : std::to_string(c.data<int64_t>()[slot]);
    case parquet::PhysicalType::kFloat: return number_json(c.data<float>()[slot]);
    case parquet::PhysicalType::kDouble: return number_json(c.data<double>()[slot]);
    case parquet::PhysicalType::kByteArray: return std::string(c.bytes(slot));
    default: return "?";
  }
}

// The value at slot `slot` of list level `level` (level == number of levels: the leaf).
inline json level_json(const parquet::ColumnData& c, size_t level, int64_t slot) {
  if (level == c.lists.size()) return leaf_json(c, slot);
  const parquet::ListLevel& l = c.lists[level];
  if (l.is_null(slot)) return nullptr;
  json out = json::array();
  for (int64_t j = l.offsets[static_cast<size_t>(slot)];
       j < l.offsets[static_cast<size_t>(slot) + 1]; ++j) {
    out.push_back(level_json(c, level + 1, j));
  }
  return out;
}

// A row's value of a column: lists as arrays, maps as arrays of [key, value].
inline json cell_json(const ArrowColumn& col, int64_t row) {
  if (!col.map_values) return level_json(col.values, 0, row);
  const parquet::ListLevel& l = col.values.lists.at(0);
  if (l.is_null(row)) return nullptr;
  json out = json::array();
  for (int64_t j = l.offsets[static_cast<size_t>(row)]; j < l.offsets[static_cast<size_t>(row) + 1];
       ++j) {
    out.push_back(json::array({leaf_json(col.values, j), leaf_json(*col.map_values, j)}));
  }
  return out;
}

inline json rows_json(const ArrowBatch& batch) {
  json rows = json::array();
  for (int64_t r = 0; r < batch.num_rows; ++r) {
    json row = json::object();
    for (const auto& c : batch.columns) row[c.name] = cell_json(c, r);
    rows.push_back(std::move(row));
  }
  return rows;
}

// Structural equality where an integer and the decimal string of the same integer are equal (the
// reader widens uint32 to int64, which the expected files write as strings).
inline bool same_json(const json& got, const json& want, std::string* where,
                      const std::string& path = "") {
  auto differ = [&]() {
    *where = path + ": got " + got.dump() + ", want " + want.dump();
    return false;
  };
  if (got.is_number() && want.is_number()) {
    if (got.is_number_float() || want.is_number_float()) {
      return got.get<double>() == want.get<double>() ? true : differ();
    }
    return got == want ? true : differ();
  }
  if (got.is_string() && want.is_number_integer()) {
    return got.get<std::string>() == want.dump() ? true : differ();
  }
  if (got.is_number_integer() && want.is_string()) {
    return got.dump() == want.get<std::string>() ? true : differ();
  }
  if (got.type() != want.type()) return differ();
  if (got.is_array()) {
    if (got.size() != want.size()) return differ();
    for (size_t i = 0; i < got.size(); ++i) {
      if (!same_json(got[i], want[i], where, path + "[" + std::to_string(i) + "]")) return false;
    }
    return true;
  }
  if (got.is_object()) {
    if (got.size() != want.size()) return differ();
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!got.contains(it.key())) return differ();
      if (!same_json(got[it.key()], it.value(), where, path + "." + it.key())) return false;
    }
    return true;
  }
  return got == want ? true : differ();
}

// Exact equality of two columns' data and leaf paths.
inline void expect_same_column(const parquet::ColumnData& a, const parquet::ColumnData& b,
                               const std::string& what) {
  EXPECT_EQ(a.descriptor.path_string, b.descriptor.path_string) << what;
  parquet::testing::expect_same_column(a, b, what);
}

inline void expect_same_batch(const ArrowBatch& a, const ArrowBatch& b, const std::string& what) {
  EXPECT_EQ(a.num_rows, b.num_rows) << what;
  ASSERT_EQ(a.columns.size(), b.columns.size()) << what;
  for (size_t i = 0; i < a.columns.size(); ++i) {
    const std::string col = what + " column " + a.columns[i].name;
    EXPECT_EQ(a.columns[i].name, b.columns[i].name) << what;
    expect_same_column(a.columns[i].values, b.columns[i].values, col);
    ASSERT_EQ(a.columns[i].map_values.has_value(), b.columns[i].map_values.has_value()) << col;
    if (a.columns[i].map_values) {
      expect_same_column(*a.columns[i].map_values, *b.columns[i].map_values, col);
    }
  }
}

// Where the parts of one encapsulated message (current framing) lie, for crafting corruptions:
// byte positions of the metadata, the body, the Message's version field and each FieldNode and
// Buffer struct of a RecordBatch message.
struct MessageLayout {
  size_t metadata = 0;
  size_t body = 0;
  size_t version = 0;  // 0 when absent
  std::vector<size_t> nodes;
  std::vector<size_t> buffers;
};

inline MessageLayout layout_of(const std::string& message) {
  MessageLayout l;
  l.metadata = 8;
  int32_t len;
  std::memcpy(&len, message.data() + 4, 4);
  l.body = 8 + static_cast<size_t>(len);
  const auto* base = reinterpret_cast<const uint8_t*>(message.data());
  const uint8_t* meta = base + 8;
  // The version field: root table, its vtable, entry 0.
  uint32_t root;
  std::memcpy(&root, meta, 4);
  int32_t soffset;
  std::memcpy(&soffset, meta + root, 4);
  const uint8_t* vtable = meta + root - soffset;
  uint16_t vsize, voff;
  std::memcpy(&vsize, vtable, 2);
  std::memcpy(&voff, vtable + 4, 2);
  if (vsize > 4 && voff != 0) l.version = 8 + root + voff;
  const FbTable m = FbTable::root(meta, static_cast<size_t>(len));
  if (m.scalar<uint8_t>(1, 0) == 3) {
    const FbTable rb = *m.table(2);
    const FbVector nodes = rb.vector(1, 16);
    for (size_t i = 0; i < nodes.size(); ++i) {
      l.nodes.push_back(static_cast<size_t>(nodes.element(i, 16) - base));
    }
    const FbVector buffers = rb.vector(2, 16);
    for (size_t i = 0; i < buffers.size(); ++i) {
      l.buffers.push_back(static_cast<size_t>(buffers.element(i, 16) - base));
    }
  }
  return l;
}

template <typename T>
void poke(std::string* bytes, size_t pos, T v) {
  std::memcpy(&(*bytes)[pos], &v, sizeof(T));
}

template <typename T>
T peek(const std::string& bytes, size_t pos) {
  T v;
  std::memcpy(&v, bytes.data() + pos, sizeof(T));
  return v;
}

}  // namespace tzrec::arrow::testing
