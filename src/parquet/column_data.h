// The in-memory, columnar result of a read (and the input of the writer).
//
// One ColumnData per leaf column, Arrow-like:
//   lists[k]  (k < max_rep, outermost first): offsets [n_k + 1] int64 into the slots of the next
//             level (lists[k + 1], or the leaf values for the innermost list), validity [n_k]
//             uint8 (1 present, 0 null) when that list level can be null, else empty.
//             lists[0] has one list per row.
//   validity  [num_values] uint8 per leaf slot when the leaf can be null, else empty.
//   defs      (lists[k].defs, defs) definition levels, kept only where validity is ambiguous
//             (several optional groups between two repeated levels; see ColumnDescriptor).
//   values    fixed-width types: [num_values * width] bytes (BOOLEAN 1 byte 0/1, INT32/FLOAT 4,
//             INT64/DOUBLE 8, INT96 12, FIXED_LEN_BYTE_ARRAY type_length); null slots hold zeros.
//             BYTE_ARRAY: the concatenated bytes, value i = values[offsets[i], offsets[i + 1]).
//   offsets   BYTE_ARRAY only: [num_values + 1] int64.
// A flat column (max_rep == 0) has one leaf slot per row.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "parquet/schema.h"

namespace tzrec::parquet {

// Growable byte buffer whose growth does not zero-fill (decoders overwrite every byte).
class Buffer {
 public:
  Buffer() = default;
  Buffer(const Buffer& other) { append(other.data(), other.size()); }
  Buffer& operator=(const Buffer& other) {
    if (this != &other) {
      clear();
      append(other.data(), other.size());
    }
    return *this;
  }
  // A moved-from buffer is empty and can be filled again (readers reuse their columns).
  Buffer(Buffer&& other) noexcept
      : data_(std::move(other.data_)), size_(std::exchange(other.size_, 0)),
        capacity_(std::exchange(other.capacity_, 0)) {}
  Buffer& operator=(Buffer&& other) noexcept {
    data_ = std::move(other.data_);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
    return *this;
  }

  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { size_ = 0; }
  void reserve(size_t n);
  // Grows by n bytes (contents unspecified); returns the start of the new bytes.
  uint8_t* grow(size_t n) {
    if (size_ + n > capacity_) reserve(std::max(size_ + n, capacity_ * 2));
    uint8_t* p = data_.get() + size_;
    size_ += n;
    return p;
  }
  void append(const void* p, size_t n) {
    if (n > 0) std::memcpy(grow(n), p, n);
  }
  void resize(size_t n) {
    if (n > capacity_) reserve(n);
    size_ = n;
  }
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(data_.get());
  }
  template <typename T>
  const T* as() const {
    return reinterpret_cast<const T*>(data_.get());
  }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

struct ListLevel {
  std::vector<int64_t> offsets{0};
  std::vector<uint8_t> validity;
  // [n] definition level of each list, only when descriptor.list_keeps_def[k] (else empty).
  std::vector<int16_t> defs;

  int64_t size() const { return static_cast<int64_t>(offsets.size()) - 1; }
  bool is_null(int64_t i) const { return !validity.empty() && validity[static_cast<size_t>(i)] == 0; }
};

struct ColumnData {
  ColumnDescriptor descriptor;
  int64_t num_rows = 0;
  std::vector<ListLevel> lists;
  std::vector<uint8_t> validity;
  // [num_values] definition level of each leaf slot, only when descriptor.leaf_keeps_def (else
  // empty): tells at which optional ancestor a null slot became null.
  std::vector<int16_t> defs;
  Buffer values;
  std::vector<int64_t> offsets;  // BYTE_ARRAY only

  const std::string& name() const { return descriptor.path_string; }
  PhysicalType type() const { return descriptor.type; }
  // Bytes per value of a fixed-width column (0 for BYTE_ARRAY).
  int value_width() const;
  // Leaf slots (= rows for flat columns).
  int64_t num_values() const;
  bool is_null(int64_t slot) const { return !validity.empty() && validity[static_cast<size_t>(slot)] == 0; }

  // Fixed-width values: T must match the physical type (int32_t, int64_t, float, double, uint8_t
  // for BOOLEAN).
  template <typename T>
  const T* data() const {
    return values.as<T>();
  }
  // BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY / INT96 value bytes.
  std::string_view bytes(int64_t slot) const;

  // Leaf slot range [begin, end) of row `row` (flat columns: [row, row + 1)).
  std::pair<int64_t, int64_t> row_slots(int64_t row) const;
};

// An empty column (no rows) shaped for `descriptor`: max_rep list levels, byte-array offsets.
ColumnData empty_column(const ColumnDescriptor& descriptor);
// Makes *column such an empty column again, keeping the capacity of its buffers (a stream decoding
// row group after row group into the same columns takes no fresh memory from the system).
void reset_column(const ColumnDescriptor& descriptor, ColumnData* column);

struct Table {
  int64_t num_rows = 0;
  std::vector<ColumnData> columns;

  // By leaf path ("a.list.element") or by top-level field name when the field has exactly one
  // leaf; nullptr when absent.
  const ColumnData* find(std::string_view name) const;
  // As find(), but throws DataError naming the available columns when absent.
  const ColumnData& column(std::string_view name) const;
};

}  // namespace tzrec::parquet
