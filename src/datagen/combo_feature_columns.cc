// Columns of combo_feature (the cartesian product of two or more id inputs) and
// bool_mask_feature (values and a mask of the same length).
#include "datagen/feature_columns.h"
#include "datagen/feature_view.h"

namespace tzrec::datagen {
namespace {

// Raw cardinality of each input of a combo: small, so that the crossed ids repeat.
constexpr int64_t kComboInputCardinality = 30;

class ComboFeatureColumns : public FeatureColumns {
 public:
  void add_columns(const FeatureContext& f, ColumnSink* out) const override {
    if (reads_fg_output(f)) {
      out->add(fg_encoded_sparse_column(f, require_bucketizer_rows(f),
                                        is_multi_value(f)));
      return;
    }
    for (const auto& input : inputs_of(f, "expression")) {
      auto spec = input_column(f, input, /*single_input_type=*/false);
      if (!spec) continue;
      spec->domain = Domain::ids(kComboInputCardinality, /*any_token=*/true);
      set_value_layout(f, /*multi_value=*/false, /*weighted=*/false, &*spec);
      out->add(std::move(*spec));
    }
  }
};

class BoolMaskFeatureColumns : public FeatureColumns {
 public:
  void add_columns(const FeatureContext& f, ColumnSink* out) const override {
    if (reads_fg_output(f)) {
      out->add(fg_encoded_sparse_column(f, require_bucketizer_rows(f),
                                        is_multi_value(f)));
      return;
    }
    const auto inputs = inputs_of(f, "expression");
    const auto values_domain = raw_id_domain(f).value_or(Domain::ids(kHashedIdCardinality, true));
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto spec = input_column(f, inputs[i], /*single_input_type=*/false);
      if (!spec) continue;
      // expression[0]: the values; expression[1]: one 0/1 flag per value.
      spec->domain = i == 0 ? values_domain : Domain::flag();
      if (!spec->sequence) {
        spec->layout = Layout::kList;
        spec->min_values = 1;
        spec->max_values = 4;
        spec->length_group = f.path;
      }
      out->add(std::move(*spec));
    }
  }
};

}  // namespace

const FeatureColumns& combo_feature_columns() {
  static const ComboFeatureColumns producer;
  return producer;
}

const FeatureColumns& bool_mask_feature_columns() {
  static const BoolMaskFeatureColumns producer;
  return producer;
}

}  // namespace tzrec::datagen
