// Columns of id_feature (and sequence_id_feature).
#include <fmt/format.h>

#include "base/error.h"
#include "datagen/feature_columns.h"
#include "datagen/feature_view.h"

namespace tzrec::datagen {
namespace {

class IdFeatureColumns : public FeatureColumns {
 public:
  void add_columns(const FeatureContext& f, ColumnSink* out) const override {
    const bool weighted = bool_field(*f.message, "weighted");
    const bool multi_value = is_multi_value(f);
    if (reads_fg_output(f)) {
      out->add(fg_encoded_sparse_column(f, require_bucketizer_rows(f), multi_value, weighted));
      return;
    }
    const auto domain = raw_id_domain(f);
    if (!domain) {
      throw ConfigError(fmt::format(
          "{}: cannot infer the values of the feature's input; set hash_bucket_size, num_buckets, "
          "vocab_list, vocab_dict or vocab_file",
          f.path));
    }
    for (const auto& input : inputs_of(f, "expression")) {
      auto spec = input_column(f, input, /*single_input_type=*/true);
      if (!spec) continue;
      spec->domain = *domain;
      set_value_layout(f, multi_value, weighted, &*spec);
      out->add(std::move(*spec));
    }
  }
};

}  // namespace

const FeatureColumns& id_feature_columns() {
  static const IdFeatureColumns producer;
  return producer;
}

}  // namespace tzrec::datagen
