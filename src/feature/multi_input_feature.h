// The base of the feature types computed from FG inputs (lookup, match, expr, custom, overlap,
// kv_dot_product, bool_mask and combine features): under FG_NONE and FG_BUCKETIZE a feature reads
// its own column (named after it) through own_encoded_, otherwise its inputs_ through parse_fg().
#pragma once

#include <string>
#include <vector>

#include "feature/feature.h"
#include "feature/lookup_values.h"
#include "feature/multi_input.h"

namespace tzrec::feature {

class MultiInputFeature : public Feature {
 public:
  std::vector<std::string> input_columns() const override {
    return multi_input_columns(fg_mode_, info_.name, inputs_);
  }
  std::vector<SideInput> side_inputs() const override { return multi_side_inputs(fg_mode_, inputs_); }
  void parse(const data::RecordBatch& batch, const ParseOutput& out) const override {
    if (reads_encoded_column(fg_mode_)) {
      own_encoded_.parse(info_, batch, out);
    } else {
      parse_fg(batch, out);
    }
  }

 protected:
  using Feature::Feature;

  // FG_NORMAL / FG_DAG: the feature generation of the type from inputs_.
  virtual void parse_fg(const data::RecordBatch& batch, const ParseOutput& out) const = 0;

  std::vector<FgInput> inputs_;  // FG_NORMAL / FG_DAG inputs (each type says which)
  std::string sequence_delim_;   // sequences: the items' separator
  OwnEncodedColumn own_encoded_;  // FG_NONE / FG_BUCKETIZE
};

}  // namespace tzrec::feature
