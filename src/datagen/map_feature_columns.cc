// Columns of lookup_feature (a "k1:v1\x1dk2:v2" map and a key) and match_feature (a
// "pk1^sk1:v,sk2:v|pk2^sk3:v" nested map, a primary and a secondary key). Keys of the maps and
// the key columns come from one small id range, so that lookups hit.
#include <algorithm>

#include <fmt/format.h>

#include "base/error.h"
#include "datagen/feature_columns.h"
#include "datagen/feature_view.h"

namespace tzrec::datagen {
namespace {

constexpr int64_t kMapKeyCardinality = 20;

// Values stored in the map: discrete ones (need_discrete, or a vocabulary / hash / num_buckets
// bucketizer) or numbers.
Domain map_value_domain(const FeatureContext& f) {
  const auto& m = *f.message;
  if (has_field(m, "vocab_list") || has_field(m, "vocab_dict") || has_field(m, "vocab_file")) {
    return *raw_id_domain(f);
  }
  if (bool_field(m, "need_discrete") || has_field(m, "num_buckets") ||
      has_field(m, "hash_bucket_size") || has_field(m, "zch") || has_field(m, "dynamicemb")) {
    return raw_id_domain(f).value_or(Domain::ids(kHashedIdCardinality, true));
  }
  return raw_number_domain(f);
}

bool is_sparse_lookup(const FeatureContext& f) { return bucketizer_rows(f).has_value(); }

void add_fg_encoded(const FeatureContext& f, int default_value_dim, ColumnSink* out) {
  const int value_dim = value_dim_or(f, default_value_dim);
  if (is_sparse_lookup(f)) {
    out->add(fg_encoded_sparse_column(f, require_bucketizer_rows(f), value_dim == 0));
  } else {
    out->add(fg_encoded_dense_column(f, std::max(value_dim, 1)));
  }
}

ColumnSpec key_column(const FeatureContext& f, ColumnSpec spec) {
  spec.domain = Domain::ids(kMapKeyCardinality, /*any_token=*/true);
  spec.layout = Layout::kScalar;
  return spec;
}

class LookupFeatureColumns : public FeatureColumns {
 public:
  void add_columns(const FeatureContext& f, ColumnSink* out) const override {
    if (reads_fg_output(f)) {
      add_fg_encoded(f, 1, out);
      return;
    }
    const auto map_input = inputs_of(f, "map");
    const auto key_input = inputs_of(f, "key");
    if (auto spec = input_column(f, map_input[0], /*single_input_type=*/false)) {
      spec->domain = Domain::ids(kMapKeyCardinality);
      spec->layout = Layout::kLookupMap;
      spec->delim = "\x1d";
      spec->min_values = 1;
      spec->max_values = 4;
      spec->value_domain = map_value_domain(f);
      const int value_dim = value_dim_or(f, 1);
      if (!is_sparse_lookup(f) && value_dim > 1) {
        spec->map_value_count = value_dim;
        const std::string sep = string_field(*f.message, "value_separator");
        spec->map_value_delim = sep.empty() ? "," : sep;
      }
      out->add(std::move(*spec));
    }
    if (auto spec = input_column(f, key_input[0], /*single_input_type=*/false)) {
      out->add(key_column(f, std::move(*spec)));
    }
  }
};

class MatchFeatureColumns : public FeatureColumns {
 public:
  void add_columns(const FeatureContext& f, ColumnSink* out) const override {
    if (reads_fg_output(f)) {
      add_fg_encoded(f, 1, out);
      return;
    }
    const auto nested = inputs_of(f, "nested_map");
    if (auto spec = input_column(f, nested[0], /*single_input_type=*/false)) {
      spec->domain = Domain::ids(kMapKeyCardinality);
      spec->layout = Layout::kNestedMap;
      spec->min_values = 1;
      spec->max_values = 3;
      spec->value_domain = map_value_domain(f);
      out->add(std::move(*spec));
    }
    for (const std::string key : {"pkey", "skey"}) {
      const std::string text = string_field(*f.message, key);
      if (text == "ALL") continue;  // matches every key: no column
      if (text.empty()) {
        throw ConfigError(fmt::format("{}: is not set; it names the key column of the feature",
                                      field_path(f, key)));
      }
      const auto input = parse_input(text, field_path(f, key));
      if (auto spec = input_column(f, input, /*single_input_type=*/false)) {
        out->add(key_column(f, std::move(*spec)));
      }
    }
  }
};

}  // namespace

const FeatureColumns& lookup_feature_columns() {
  static const LookupFeatureColumns producer;
  return producer;
}

const FeatureColumns& match_feature_columns() {
  static const MatchFeatureColumns producer;
  return producer;
}

}  // namespace tzrec::datagen
