// Columns of expr_feature (numeric variables of an expression) and combine_feature (values
// mapped by value_map, or numbers, combined into one).
#include <algorithm>
#include <cctype>

#include "datagen/feature_columns.h"
#include "datagen/feature_view.h"

namespace tzrec::datagen {
namespace {

class ExprFeatureColumns : public FeatureColumns {
 public:
  void add_columns(const FeatureContext& f, ColumnSink* out) const override {
    if (reads_fg_output(f)) {
      out->add(has_field(*f.message, "boundaries")
                   ? fg_encoded_sparse_column(f, require_bucketizer_rows(f), false)
                   : fg_encoded_dense_column(f, std::max(value_dim_or(f, 1), 1)));
      return;
    }
    for (const auto& input : inputs_of(f, "variables")) {
      auto spec = input_column(f, input, /*single_input_type=*/false);
      if (!spec) continue;
      spec->domain = Domain::floats(0.0, 1.0);
      out->add(std::move(*spec));
    }
  }
};

class CombineFeatureColumns : public FeatureColumns {
 public:
  void add_columns(const FeatureContext& f, ColumnSink* out) const override {
    const auto& m = *f.message;
    if (reads_fg_output(f)) {
      if (has_field(m, "num_buckets") || has_field(m, "boundaries")) {
        out->add(fg_encoded_sparse_column(f, require_bucketizer_rows(f), false));
      } else {
        out->add(fg_encoded_dense_column(f, 1));
      }
      return;
    }
    const auto value_map = map_field(m, "value_map");
    for (const auto& input : inputs_of(f, "expression")) {
      auto spec = input_column(f, input, /*single_input_type=*/true);
      if (!spec) continue;
      if (!value_map.empty()) {
        std::vector<std::string> keys;
        for (const auto& [k, v] : value_map) keys.push_back(k);
        spec->domain = Domain::vocabulary(std::move(keys));
      } else {
        spec->domain = raw_number_domain(f);
      }
      // Several values per cell, combined by `combiner`; one with num_buckets and a sum or count,
      // whose combined value could leave [0, num_buckets) (a data error when parsed).
      std::string combiner = string_field(m, "combiner");
      for (char& ch : combiner) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      const bool unbounded = combiner == "sum" || combiner == "count" || combiner.empty();
      set_value_layout(f, /*multi_value=*/!(has_field(m, "num_buckets") && unbounded), /*weighted=*/false, &*spec);
      out->add(std::move(*spec));
    }
  }
};

}  // namespace

const FeatureColumns& expr_feature_columns() {
  static const ExprFeatureColumns producer;
  return producer;
}

const FeatureColumns& combine_feature_columns() {
  static const CombineFeatureColumns producer;
  return producer;
}

}  // namespace tzrec::datagen
