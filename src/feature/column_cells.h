// One input column of a data::RecordBatch seen as rows of values, whatever its storage: a text
// cell (CSV) split by a separator, or a typed Parquet column (scalar, list, map). The feature
// parser reads every column through this view, so CSV and Parquet inputs holding the same values
// give the same batches.
//
// Typed columns (docs/tzrec-compatibility.md §5.6, TorchEasyRec's Arrow handling):
//   int32 / int64 / bool scalar   -> one integer value; null -> empty cell
//   float / double scalar         -> one number; null -> empty cell
//   string scalar                 -> the text, split like a CSV cell
//   list<int|float|string>        -> one value per non-null element (strings are not split);
//                                    a null or empty list -> empty cell
//   map<key, int|float>           -> one value per entry: the key, with the entry's value as
//                                    its weight (weighted features)
//   list<list<...>>               -> rejected here (only sequence features take them)
//   map<key, string>              -> only as the map input of a lookup / match feature (kv_map:
//                                    for_each_entry gives keys and values as they are)
// "Empty" (null, "", or an empty list/map) is what defaults apply to, as for an empty CSV cell.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "data/record_batch.h"
#include "feature/text_values.h"

namespace tzrec::feature {

// The one-byte members last: 48 bytes rather than 56 with them padded between the 8-byte ones
// (map cells are split into pairs of these, kv_map.h).
struct CellValue {
  enum class Kind : int8_t { kText, kInt, kFloat };
  std::string_view text;  // kText
  int64_t i = 0;          // kInt
  double d = 0;           // kFloat
  double weight = 1.0;    // map entries: the entry's value
  Kind kind = Kind::kText;
  bool has_weight = false;
};
static_assert(sizeof(CellValue) == 48);

class ColumnCells {
 public:
  // Throws DataError when the batch has no such column (naming `user`, the feature or field that
  // needs it) and when the column's shape cannot feed the feature (list<list<...>> unless
  // `sequence`, maps for sequences, map with string values unless `kv_map`, unsupported leaf
  // types). `kv_map`: the column is the map input of a lookup / match feature, read with
  // for_each_entry (its values are data, not weights).
  ColumnCells(const data::RecordBatch& batch, const std::string& name, const std::string& user,
              bool sequence = false, bool kv_map = false);

  const std::string& name() const { return name_; }
  bool is_map() const { return typed_ && typed_->is_map(); }
  // A single value per row by construction (text cell or typed scalar); lists and maps are not.
  bool is_scalar() const { return !typed_ || typed_->list_depth() == 0; }
  // Kind of the typed leaf values (kText for text columns and string leaves).
  CellValue::Kind leaf_kind() const { return leaf_kind_; }
  // "Parquet list<int64>", "CSV text", ... for messages.
  std::string describe_type() const;

  // "file.csv line 12 column cat_3"
  std::string where(int64_t row) const;

  // True when the cell is null, "" or an empty list / map.
  bool empty(int64_t row) const {
    if (text_) return text_->offsets[row + 1] == text_->offsets[row];
    const auto& c = typed_->values;
    if (c.lists.empty()) {
      if (c.is_null(row)) return true;
      return c.type() == parquet::PhysicalType::kByteArray && c.offsets[row + 1] == c.offsets[row];
    }
    return c.lists[0].offsets[row + 1] == c.lists[0].offsets[row];
  }

  // The value of a scalar column's non-empty cell, unsplit (is_scalar() must hold).
  CellValue scalar(int64_t row) const {
    if (text_) {
      CellValue v;
      v.text = text_->cell(row);
      return v;
    }
    return leaf(typed_->values, row);
  }

  // Map columns (is_map()): calls fn(const CellValue& key, const CellValue& value) for each entry
  // of a non-empty cell, in order; entries with a null value are skipped.
  template <typename Fn>
  void for_each_entry(int64_t row, Fn&& fn) const {
    const auto& c = typed_->values;
    const auto& m = *typed_->map_values;
    const int64_t b = c.lists[0].offsets[row], e = c.lists[0].offsets[row + 1];
    for (int64_t s = b; s < e; ++s) {
      if (c.is_null(s) || m.is_null(s)) continue;
      fn(leaf(c, s), leaf_of(m, s, map_unsigned32_));
    }
  }

  // One item of a sequence cell (see for_each_item): its values.
  class Item {
   public:
    // True when the item holds no value: "" between delimiters, or an empty inner list.
    bool empty() const { return is_text_ ? text_value_.text.empty() : begin_ == end_; }
    // The item's one value when it is text known to hold no `sep` (what for_each would hand over
    // alone), else nullptr.
    const CellValue* one_text_value() const { return is_text_ && one_value_ ? &text_value_ : nullptr; }
    // Calls fn(const CellValue&) for each value: text split by `sep`, list elements as they are
    // (null elements skipped).
    template <typename Fn>
    void for_each(Fn&& fn) const {
      if (is_text_) {
        if (one_value_) {
          fn(text_value_);
        } else {
          split(text_value_.text, sep_, fn);
        }
        return;
      }
      const auto& c = cells_->typed_->values;
      for (int64_t s = begin_; s < end_; ++s) {
        if (c.is_null(s)) continue;
        CellValue v = cells_->leaf(c, s);
        if (v.kind == CellValue::Kind::kText) {
          split(v.text, sep_, fn);
        } else {
          fn(v);
        }
      }
    }

   private:
    friend class ColumnCells;
    const ColumnCells* cells_ = nullptr;
    bool is_text_ = true;
    bool one_value_ = false;  // text known to hold no sep: the item is one value
    // A text item's text, given as the value itself when one_value_ (a per-item copy, read right
    // after for_each_item stored the text, would stall the load on that store).
    CellValue text_value_;
    std::string_view sep_;
    int64_t begin_ = 0, end_ = 0;  // leaf slots of a typed item
  };

  // Sequence cells: calls fn(const Item&) for each item of a non-empty cell, in order. Text is
  // split into items by `sequence_delim` and an item's values by `sep`; list<...> elements are
  // one item each (a string element split by `sep`); list<list<...>> inner lists are the items.
  template <typename Fn>
  void for_each_item(int64_t row, std::string_view sequence_delim, std::string_view sep, Fn&& fn) const {
    Item item;
    item.cells_ = this;
    item.sep_ = sep;
    if (text_ || typed_->list_depth() == 0) {
      const std::string_view text = text_ ? text_->cell(row) : typed_->values.bytes(row);
      // Items mostly hold one value each: one search of the whole cell for `sep` spares splitting
      // every item again.
      item.one_value_ = text.find(sep) == std::string_view::npos;
      for_each_token(text, sequence_delim, [&](std::string_view t) {
        item.text_value_.text = t;
        fn(static_cast<const Item&>(item));
      });
      return;
    }
    item.is_text_ = false;
    const auto& c = typed_->values;
    const int64_t b = c.lists[0].offsets[row], e = c.lists[0].offsets[row + 1];
    for (int64_t k = b; k < e; ++k) {
      if (c.lists.size() == 1) {
        item.begin_ = k;
        item.end_ = c.is_null(k) ? k : k + 1;
      } else {
        const auto& inner = c.lists[1];
        item.begin_ = inner.offsets[k];
        item.end_ = inner.is_null(k) ? item.begin_ : inner.offsets[k + 1];
      }
      fn(static_cast<const Item&>(item));
    }
  }

  // Calls fn(const CellValue&) for each value of a non-empty cell. Text (CSV cells and string
  // scalars) is split by `sep` (empty tokens included, as for_each_token); list elements and map
  // keys are not split; null list elements are skipped.
  template <typename Fn>
  void for_each(int64_t row, std::string_view sep, Fn&& fn) const {
    if (text_) {
      split(text_->cell(row), sep, fn);
      return;
    }
    const auto& c = typed_->values;
    if (c.lists.empty()) {
      if (c.type() == parquet::PhysicalType::kByteArray) {
        split(c.bytes(row), sep, fn);
      } else {
        fn(leaf(c, row));
      }
      return;
    }
    const int64_t b = c.lists[0].offsets[row], e = c.lists[0].offsets[row + 1];
    for (int64_t s = b; s < e; ++s) {
      if (c.is_null(s)) continue;
      CellValue v = leaf(c, s);
      if (typed_->map_values) {
        const auto& m = *typed_->map_values;
        if (m.is_null(s)) continue;  // an entry without a weight carries nothing
        v.has_weight = true;
        v.weight = number(m, s);
      }
      fn(v);
    }
  }

 private:
  template <typename Fn>
  static void split(std::string_view s, std::string_view sep, Fn& fn) {
    CellValue v;
    for_each_token(s, sep, [&](std::string_view t) {
      v.text = t;
      fn(v);
    });
  }

  CellValue leaf(const parquet::ColumnData& c, int64_t slot) const { return leaf_of(c, slot, unsigned32_); }
  // The value in `slot` of a typed column (its kind follows the column's physical type).
  static CellValue leaf_of(const parquet::ColumnData& c, int64_t slot, bool unsigned32) {
    CellValue v;
    switch (c.type()) {
      case parquet::PhysicalType::kInt64:
        v.kind = CellValue::Kind::kInt;
        v.i = c.data<int64_t>()[slot];
        break;
      case parquet::PhysicalType::kInt32:
        v.kind = CellValue::Kind::kInt;
        v.i = unsigned32 ? static_cast<int64_t>(static_cast<uint32_t>(c.data<int32_t>()[slot]))
                         : c.data<int32_t>()[slot];
        break;
      case parquet::PhysicalType::kBoolean:
        v.kind = CellValue::Kind::kInt;
        v.i = c.data<uint8_t>()[slot];
        break;
      case parquet::PhysicalType::kFloat:
        v.kind = CellValue::Kind::kFloat;
        v.d = c.data<float>()[slot];
        break;
      case parquet::PhysicalType::kDouble:
        v.kind = CellValue::Kind::kFloat;
        v.d = c.data<double>()[slot];
        break;
      default:
        v.text = c.bytes(slot);
        break;
    }
    return v;
  }
  static double number(const parquet::ColumnData& c, int64_t slot);

  std::string name_;
  const data::RecordBatch* batch_;
  const data::StringColumn* text_ = nullptr;
  const data::TypedColumn* typed_ = nullptr;
  CellValue::Kind leaf_kind_ = CellValue::Kind::kText;
  bool unsigned32_ = false;
  bool map_unsigned32_ = false;
};

// Conversions of a CellValue, shared by the parsers. Each returns false when the value does not
// convert (the caller raises the error with its context).
//   as_int64:  text -> whole-token integer; int -> itself; float -> only when integral.
//   as_double: text -> number (NaN rejected); int / float -> the number (NaN rejected).
//   as_text:   text -> itself; int -> decimal; float -> shortest round-trip decimal. Uses *buf.
bool as_int64(const CellValue& v, int64_t* out);
// Inline: raw features convert every value of their sequences' items.
inline bool as_double(const CellValue& v, double* out) {
  switch (v.kind) {
    case CellValue::Kind::kInt:
      *out = static_cast<double>(v.i);
      return true;
    case CellValue::Kind::kFloat:
      *out = v.d;
      return !std::isnan(v.d);
    default:
      return parse_double(v.text, out);
  }
}
std::string_view as_text(const CellValue& v, std::string* buf);
// Room for the text of any number value (the longest shortest-round-trip double is 24 bytes).
struct NumberText {
  char bytes[40];
};
// The same without allocating: a number's text is written into *tmp.
std::string_view as_text(const CellValue& v, NumberText* tmp);
// Texts of values that must outlive the next value read: a text value's view of the batch, or the
// text of a number kept here (in a deque, where a kept string stays put while more are added)
// until clear().
class ValueTexts {
 public:
  std::string_view of(const CellValue& v) {
    if (v.kind == CellValue::Kind::kText) return v.text;
    return kept_.emplace_back(as_text(v, &tmp_));
  }
  // of(v) at the end of *out, written from its pointer and size: a view copied whole (one 16-byte
  // load) right after the two 8-byte stores that wrote it (a split's token) cannot be forwarded
  // from them and waits until they reach the cache — half the time of splitting a list input.
  void append(const CellValue& v, std::vector<std::string_view>* out) {
    const std::string_view t = of(v);
    out->emplace_back(t.data(), t.size());
  }
  void clear() { kept_.clear(); }

 private:
  std::deque<std::string> kept_;
  NumberText tmp_;
};
// The value as written, for messages ("12", "abc", "0.5").
std::string display(const CellValue& v);
// Row `r` of `cells` appended to *out as one text cell: empty cells as "", scalars as as_text,
// list elements as_text joined by `list_sep` (the text form of typed cells that sampled rows are
// appended to). *buf is scratch.
void append_cell_text(const ColumnCells& cells, int64_t r, const std::string& list_sep, std::string* buf,
                      data::StringColumn* out);

}  // namespace tzrec::feature
