// Columns of raw_feature (and sequence_raw_feature): numbers, value_dim per cell.
#include "datagen/feature_columns.h"
#include "datagen/feature_view.h"

namespace tzrec::datagen {
namespace {

class RawFeatureColumns : public FeatureColumns {
 public:
  void add_columns(const FeatureContext& f, ColumnSink* out) const override {
    const int value_dim = std::max(value_dim_or(f, 1), 1);
    const bool bucketized = has_field(*f.message, "boundaries");
    if (reads_fg_output(f)) {
      // A raw_feature with boundaries is sparse: its FG output is bucket ids (§5.6).
      out->add(bucketized ? fg_encoded_sparse_column(f, require_bucketizer_rows(f), false)
                          : fg_encoded_dense_column(f, value_dim));
      return;
    }
    for (const auto& input : inputs_of(f, "expression")) {
      auto spec = input_column(f, input, /*single_input_type=*/true);
      if (!spec) continue;
      spec->domain = raw_number_domain(f);
      if (value_dim > 1) {
        // Fixed-length vectors: a list column, or within a sequence element the values joined
        // by the feature's separator.
        spec->layout = spec->sequence ? Layout::kJoined : Layout::kList;
        spec->delim = separator_of(f);
        spec->min_values = spec->max_values = value_dim;
      }
      out->add(std::move(*spec));
    }
  }
};

}  // namespace

const FeatureColumns& raw_feature_columns() {
  static const RawFeatureColumns producer;
  return producer;
}

}  // namespace tzrec::datagen
