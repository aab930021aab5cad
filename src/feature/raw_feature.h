// raw_feature, sequence_raw_feature and the raw_feature sub-features of a grouped sequence_feature
// (docs/tzrec-compatibility.md §5.5, §5.6). With boundaries the feature is sparse (value_dim
// bucket ids per row or item, table len(boundaries) + 1), without it dense (value_dim floats).
//
// FG_NONE (the column holds FG output, named after the feature): bucket ids or value_dim floats
//   split by fg_encoded_multival_sep; an empty cell uses fg_encoded_default_value (dense features
//   need one). No normalizer is applied (a configured one is reported once).
//   Sequences: items split by sequence_delim (or list<...> elements, or inner lists), each with
//   value_dim values; an empty cell is an empty history (or one item of the default); no
//   truncation.
// FG_BUCKETIZE: read as FG_NONE, but with boundaries the column holds the numbers before
//   bucketization (after the normalizer, which is part of feature generation) and each is bucketized.
// FG_NORMAL / FG_DAG (the expression's input; grouped sub-features read "<sequence_name>__<input>"):
//   an empty cell (sequences: also an empty item) is default_value ("0"), a single default value
//   repeated value_dim times; values split by `separator`; normalizer; then with boundaries
//   bucket = number of boundaries <= value (std::upper_bound on float32 values: a value equal to a
//   boundary goes to the upper bucket, like TF / pyfg bucketize). Sequences longer than
//   sequence_length keep their first sequence_length items.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "feature/column_cells.h"
#include "feature/feature.h"
#include "feature/normalizer.h"
#include "tzrec/protos/feature.pb.h"

namespace tzrec::feature {

class RawFeature : public Feature {
 public:
  // `type`: the config oneof name; `sequence`: parse as a sequence (sequence_raw_feature, or a
  // sub-feature of the grouped sequence in ctx).
  RawFeature(const protos::RawFeature& c, const std::string& path, const std::string& type, const BuildContext& ctx,
             bool sequence);

  std::vector<std::string> input_columns() const override { return {input_column_}; }
  std::vector<SideInput> side_inputs() const override {
    if (reads_encoded_column(fg_mode_)) return {};
    return {{input_side_, input_column_}};
  }
  void parse(const data::RecordBatch& batch, const ParseOutput& out) const override;

 protected:
  std::vector<nlohmann::ordered_json> fg_json_entries() const override;

 private:
  // The value_dim values of one row or item: `for_each_value(fn)` calls fn(const CellValue&) for
  // its values; none → the default value. FG modes normalize them.
  template <typename ForEach>
  void values_of(const ForEach& for_each_value, const ColumnCells& cells, int64_t r, std::vector<double>* vals) const;
  // "dense" for FG_NONE dense features, "raw" otherwise (in messages).
  const char* kind() const;
  // An FG_NONE bucket id, checked against the table.
  int64_t encoded_bucket(const CellValue& v, const std::string& where) const;
  // The bucket of number v among the boundaries; of cell value v (FG_BUCKETIZE; DataError at
  // cells.where(r) when it is not a number).
  int64_t bucket(double v) const;
  int64_t value_bucket(const CellValue& v, const ColumnCells& cells, int64_t r) const;
  // FG modes, value_dim 1: one row's text cell of items that are one number each, appended to
  // `out` as parse() would; false, with nothing appended, when an item is empty or not a plain
  // number or the cell may hold `separator_` (not empty; parse() then takes the general path for
  // the row).
  bool push_number_items(std::string_view text, int64_t max_items, const ParseOutput& out) const;
  // Writes vals as bucket ids (sparse) or floats (dense) of one row or item.
  void emit(const std::vector<double>& vals, const ColumnCells& cells, int64_t r, const ParseOutput& out,
            float* dense_row) const;

  protos::RawFeature config_;  // for fg_json_entries()
  std::string input_column_;
  std::string input_side_;  // FG modes: the side of the expression
  std::string sequence_delim_;
  int64_t value_dim_ = 1;                          // values per row (per item of a sequence)
  std::optional<std::string> fg_encoded_default_;  // FG_NONE
  std::string default_value_;                      // FG_NORMAL
  std::string separator_;
  std::vector<float> boundaries_;  // sorted ascending; empty: dense
  Normalizer normalizer_;
};

}  // namespace tzrec::feature
