// The FG inputs of a feature with several of them (combo_feature's expressions, lookup_feature's
// map and key, match_feature's nested_map, pkey and skey) and their values per row, or per item
// of a sequence (docs/tzrec-compatibility.md §5.1, §5.8).
//
// Sequence inputs (TorchEasyRec's rule for features of several inputs): in a sequence feature, an
// input is per item when sequence_fields lists its input name, or — sequence_fields empty — when
// its side is "item"; the other inputs hold one value (or one map) per row that every item of the
// row sees. In a grouped sequence_feature the sequence inputs are read from column
// "<sequence_name>__<input_name>", the others from "<input_name>".
//
// Items of a row: the sequence inputs are split by the sequence_delim (or are list<...> /
// list<list<...>> columns); inputs that are not empty in a row must have the same number of items
// (else DataError); an empty sequence input has no values in any item; a row whose sequence
// inputs are all empty has one item (the feature's default value).
#pragma once

#include <google/protobuf/repeated_ptr_field.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "feature/column_cells.h"
#include "feature/feature.h"

namespace tzrec::feature {

struct FgInput {
  std::string field;      // config field path, e.g. "feature_configs[2].lookup_feature.key"
  std::string side;       // user | item | context
  std::string name;       // input name
  std::string column;     // the column read (grouped sequence inputs carry the sequence prefix)
  bool sequence = false;  // per item
  bool kv_map = false;    // a map input (lookup map, match nested_map): string map values allowed
  std::string separator;  // splits the input's text values (multi-values, map entries)
};

// The columns a feature of several inputs reads: under FG_NONE its own column (named after the
// feature), else each input's column.
std::vector<std::string> multi_input_columns(FgMode mode, const std::string& feature, const std::vector<FgInput>& inputs);

// Feature::side_inputs of a feature of several inputs: each input's side and column, none under
// FG_NONE / FG_BUCKETIZE.
std::vector<SideInput> multi_side_inputs(FgMode mode, const std::vector<FgInput>& inputs);

// The input of expression `expr` at config field `field` (parse_fg_input rules) for a feature
// built in `ctx`; `sequence`: the feature is a sequence; `sequence_fields`: the message's
// sequence_fields. `single_input`: the input of a feature type TorchEasyRec reads from one input
// (combine_feature), which in a sequence is per item whatever its side (user, item or context)
// unless sequence_fields says otherwise.
FgInput make_fg_input(const std::string& expr, const std::string& field, const BuildContext& ctx, bool sequence,
                      const google::protobuf::RepeatedPtrField<std::string>& sequence_fields,
                      const std::string& separator, bool kv_map = false, bool single_input = false);

// Checks the sequence inputs of a sequence feature at `path`: every sequence_fields entry names one
// of `inputs`, and at least one input is per item. ConfigError naming the field otherwise.
void check_sequence_inputs(const std::vector<FgInput>& inputs,
                           const google::protobuf::RepeatedPtrField<std::string>& sequence_fields,
                           const std::string& path);

// sequence_fields outside a sequence feature: ConfigError naming the field (only a sequence feature
// has per-item inputs). Every feature type with sequence_fields calls it.
void check_sequence_fields_need_sequence(bool sequence,
                                         const google::protobuf::RepeatedPtrField<std::string>& sequence_fields,
                                         const std::string& path);

// sequence_fields of a feature TorchEasyRec reads from one input (id, raw, tokenize: `expr` at
// `expr_field`). Its input is per item in a sequence whether sequence_fields lists it or is empty;
// an entry naming anything else (which would make the input one value per row, from which such a
// feature has no items to read) is a ConfigError naming the entry, as is sequence_fields outside
// a sequence.
void check_single_input_sequence_fields(const std::string& expr, const std::string& expr_field, bool sequence,
                                        const google::protobuf::RepeatedPtrField<std::string>& sequence_fields,
                                        const std::string& path);

// The columns of the inputs opened on one batch, and their values per row or item.
class MultiInputCells {
 public:
  // `user`: "feature <name>" for messages; sequence_delim / max_items: sequence features only
  // (max_items <= 0: no limit).
  MultiInputCells(const data::RecordBatch& batch, const std::vector<FgInput>& inputs, const std::string& user,
                  std::string_view sequence_delim = {}, int64_t max_items = 0);

  const ColumnCells& cells(size_t i) const { return *cells_[i]; }
  const FgInput& input(size_t i) const { return (*inputs_)[i]; }

  // Sequence features: collects the items of row r; returns the number of items (capped at
  // max_items). DataError when non-empty sequence inputs have different numbers of items.
  int64_t begin_row(int64_t r);

  // Calls fn(const CellValue&) for each value of input i in row r and, for a sequence input,
  // item k (k from begin_row): text split by the input's separator, list elements as they are.
  // Empty text tokens are passed on (callers skip them where they mean "no value").
  template <typename Fn>
  void for_each_value(size_t i, int64_t r, int64_t k, Fn&& fn) const {
    const FgInput& in = (*inputs_)[i];
    if (in.sequence) {
      const auto& items = items_[i];
      if (k < static_cast<int64_t>(items.size())) items[static_cast<size_t>(k)].for_each(fn);
      return;
    }
    const ColumnCells& c = *cells_[i];
    if (!c.empty(r)) c.for_each(r, in.separator, fn);
  }

  // "file.csv line 3 column kv_cate" for messages about input i in row r.
  std::string where(size_t i, int64_t r) const { return cells_[i]->where(r); }

 private:
  const std::vector<FgInput>* inputs_;
  std::vector<std::unique_ptr<ColumnCells>> cells_;
  std::vector<std::vector<ColumnCells::Item>> items_;  // per input: the items of the current row
  std::string sequence_delim_;
  int64_t max_items_ = 0;
};

}  // namespace tzrec::feature
