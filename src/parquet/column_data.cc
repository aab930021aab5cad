#include "parquet/column_data.h"

#include <algorithm>
#include <new>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"

namespace tzrec::parquet {

void Buffer::reserve(size_t n) {
  if (n <= capacity_) return;
  void* p = std::realloc(data_.get(), n);
  if (p == nullptr) throw std::bad_alloc();
  data_.release();
  data_.reset(static_cast<uint8_t*>(p));
  capacity_ = n;
}

int ColumnData::value_width() const {
  if (descriptor.type == PhysicalType::kFixedLenByteArray) return descriptor.type_length;
  return fixed_width(descriptor.type);
}

int64_t ColumnData::num_values() const {
  if (descriptor.type == PhysicalType::kByteArray) return offsets.empty() ? 0 : static_cast<int64_t>(offsets.size()) - 1;
  int w = value_width();
  return w == 0 ? 0 : static_cast<int64_t>(values.size() / static_cast<size_t>(w));
}

std::string_view ColumnData::bytes(int64_t slot) const {
  const char* base = reinterpret_cast<const char*>(values.data());
  if (descriptor.type == PhysicalType::kByteArray) {
    size_t b = static_cast<size_t>(offsets[static_cast<size_t>(slot)]);
    size_t e = static_cast<size_t>(offsets[static_cast<size_t>(slot) + 1]);
    return std::string_view(base + b, e - b);
  }
  size_t w = static_cast<size_t>(value_width());
  return std::string_view(base + static_cast<size_t>(slot) * w, w);
}

std::pair<int64_t, int64_t> ColumnData::row_slots(int64_t row) const {
  int64_t b = row, e = row + 1;
  for (const auto& level : lists) {
    b = level.offsets[static_cast<size_t>(b)];
    e = level.offsets[static_cast<size_t>(e)];
  }
  return {b, e};
}

ColumnData empty_column(const ColumnDescriptor& descriptor) {
  ColumnData c;
  reset_column(descriptor, &c);
  return c;
}

void reset_column(const ColumnDescriptor& descriptor, ColumnData* column) {
  ColumnData& c = *column;
  c.descriptor = descriptor;
  c.num_rows = 0;
  c.lists.resize(static_cast<size_t>(descriptor.max_rep));
  for (ListLevel& level : c.lists) {
    level.offsets.assign(1, 0);
    level.validity.clear();
    level.defs.clear();
  }
  c.validity.clear();
  c.defs.clear();
  c.values.clear();
  c.offsets.clear();
  if (descriptor.type == PhysicalType::kByteArray) c.offsets.push_back(0);
}

const ColumnData* Table::find(std::string_view name) const {
  for (const auto& c : columns) {
    if (c.descriptor.path_string == name) return &c;
  }
  const ColumnData* match = nullptr;
  for (const auto& c : columns) {
    if (c.descriptor.field_name == name) {
      if (match != nullptr) return nullptr;  // several leaves: ambiguous
      match = &c;
    }
  }
  return match;
}

const ColumnData& Table::column(std::string_view name) const {
  const ColumnData* c = find(name);
  if (c == nullptr) {
    std::vector<std::string> names;
    for (const auto& col : columns) names.push_back(col.descriptor.path_string);
    throw DataError(fmt::format("column '{}' is not in the table (columns: {})", name, fmt::join(names, ", ")));
  }
  return *c;
}

}  // namespace tzrec::parquet
