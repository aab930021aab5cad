// expr_feature, sequence_expr_feature and the expr_feature sub-features of a grouped
// sequence_feature (docs/tzrec-compatibility.md §5.10, ExprFeature): a math expression over
// numeric inputs (expr_parser.h for the language, expr_program.h for its evaluation).
//
// Sparse iff boundaries is set (bucket ids, table len(boundaries) + 1, bucketizer.h compares in
// float32: a value equal to a boundary goes to the upper bucket); dense otherwise: value_dim floats
// per row (per item of a sequence), value_dim 1 when unset (TorchEasyRec's RawFeature.value_dim).
//
// FG_NONE (the column named after the feature holds FG output): sparse as id_feature (bucket ids
// split by fg_encoded_multival_sep, fg_encoded_default_value for empty cells), dense as
// raw_feature.
// FG_NORMAL / FG_DAG (inputs: `variables`, "side:name"; the expression names them by `name`; in a
// sequence the item-side variables — or those in sequence_fields — are per item, multi_input.h):
//   each variable's values split by `separator` (list columns: their elements; empty tokens are no
//   value): one value is a scalar, several a vector. A value that is not a number is a DataError.
//   When a variable the expression uses has no value in a row (item), the row (item) is
//   default_value (numbers split by `separator`; "" gives no id, or a DataError for a dense
//   feature) — TorchEasyRec's test_expr_feature_dense. Otherwise the expression's value(s): one
//   for a scalar result, n for a vector of n. A NaN result is a DataError (guard with isnan(),
//   or set fill_missing for vectors of different lengths).
//   Sparse: one bucket id per value; value_dim n > 0 keeps the first n (pyfg's truncation), 0 (the
//   default) keeps all. Dense: exactly value_dim values (one default value stands for all).
//   Sequences: one result per item; an empty default is "0"; value_dim defaults to 1 (sparse: the
//   item's first id, 0: all, > 1 is a ConfigError); histories longer than sequence_length keep their
//   first items.
//   rnd() draws from a stream seeded by the row's file, line and item and the feature's name, so a
//   rerun gives the same features.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "feature/bucketizer.h"
#include "feature/expr_program.h"
#include "feature/multi_input_feature.h"
#include "feature/feature_support.h"
#include "feature/lookup_values.h"
#include "feature/multi_input.h"
#include "feature/raw_feature.h"
#include "tzrec/protos/feature.pb.h"

namespace tzrec::feature {

class ExprFeature : public MultiInputFeature {
 public:
  ExprFeature(const protos::ExprFeature& c, const std::string& path, const std::string& type, const BuildContext& ctx,
              bool sequence);

  bool cross_negative_group() const override { return true; }

 protected:
  // TorchEasyRec's ExprFeature._fg_json (docs/tzrec-compatibility.md §5.3).
  std::vector<nlohmann::ordered_json> fg_json_entries() const override;

 private:
  struct Scratch;
  // The values of row r (item k) into s->result: the expression's, or the default's when a used
  // variable is empty (then s->from_default).
  void values_of(const MultiInputCells& cells, const data::RecordBatch& batch, int64_t r, int64_t k,
                 Scratch* s) const;
  // Pushes the bucket ids of s->result (at most max_ids_ when > 0); returns how many.
  int64_t push_ids(const Scratch& s, const ParseOutput& out) const;
  // Writes width_ floats of s->result (row r) to `dense`.
  void write_dense(const Scratch& s, const MultiInputCells& cells, const data::RecordBatch& batch, int64_t r,
                   float* dense) const;
  void parse_fg(const data::RecordBatch& batch, const ParseOutput& out) const override;

  protos::ExprFeature config_;
  // inputs_: the variables, in config order
  ExprProgram program_;
  Bucketizer bucketizer_;  // kBoundaries (sparse) or kNone (dense)
  std::string expression_;
  std::string default_value_;          // the effective default_value text
  std::vector<double> default_numbers_;  // default_value_ as numbers (empty: none)
  int64_t width_ = 1;                  // dense: floats per row / item
  int64_t max_ids_ = 0;                // sparse: ids kept per row / item; 0: all
  uint64_t name_seed_ = 0;             // rnd(): the feature's part of the seed
  // FG_NONE
};

}  // namespace tzrec::feature
