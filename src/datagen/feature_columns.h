// The columns a feature reads, per feature type: one FeatureColumns producer for each message
// of the FeatureConfig oneof (id_feature, raw_feature, combo_feature, lookup_feature,
// match_feature, expr_feature, overlap_feature, tokenize_feature, kv_dot_product,
// bool_mask_feature, combine_feature, custom_feature; the sequence_* variants and the
// features of a grouped sequence_feature use the producer of their base type).
//
// With fg_mode FG_NONE (and FG_BUCKETIZE) a feature reads one column named after it
// ({sequence_name}__{feature_name} inside a grouped sequence) holding feature-generation
// output: ids in [0, num_embeddings) for sparse features, value_dim floats for dense ones
// (docs/tzrec-compatibility.md §5.1, §5.6). With FG_NORMAL / FG_DAG it reads the raw inputs
// named by its expressions (side:name), in the form its feature generator parses (§5.5).
#pragma once

#include <string>
#include <vector>

#include <google/protobuf/message.h>

#include "datagen/column_spec.h"
#include "tzrec/protos/data.pb.h"

namespace tzrec::datagen {

// One feature as the producers see it.
struct FeatureContext {
  const google::protobuf::Message* message = nullptr;  // IdFeature, RawFeature, ...
  std::string type;  // base oneof name without "sequence_": "id_feature", "raw_feature", ...
  std::string path;  // field path of the message, e.g. "feature_configs[3].id_feature"
  protos::FgMode fg_mode = protos::FG_NONE;
  std::string multival_sep = "\x03";  // data_config.fg_encoded_multival_sep
  bool sequence = false;   // a sequence_* feature or a feature of a grouped sequence_feature
  bool grouped = false;    // inside a grouped sequence_feature
  std::string sequence_name;  // the grouped sequence's name, non-empty exactly when grouped
  int sequence_length = 0;
  std::string sequence_delim = ";";
};

// Receives the column specs of a feature.
class ColumnSink {
 public:
  virtual ~ColumnSink() = default;
  virtual void add(ColumnSpec spec) = 0;
};

class FeatureColumns {
 public:
  virtual ~FeatureColumns() = default;
  // Adds the columns `f` reads. Throws ConfigError (naming the field path) when a column's type
  // cannot be inferred from the config.
  virtual void add_columns(const FeatureContext& f, ColumnSink* out) const = 0;
};

// The producer for a base feature type ("id_feature", ...); nullptr for an unknown type.
const FeatureColumns* feature_columns_for(const std::string& type);

// Producers, one per file.
const FeatureColumns& id_feature_columns();
const FeatureColumns& raw_feature_columns();
const FeatureColumns& combo_feature_columns();
const FeatureColumns& lookup_feature_columns();
const FeatureColumns& match_feature_columns();
const FeatureColumns& expr_feature_columns();
const FeatureColumns& overlap_feature_columns();
const FeatureColumns& tokenize_feature_columns();
const FeatureColumns& kv_dot_product_columns();
const FeatureColumns& bool_mask_feature_columns();
const FeatureColumns& combine_feature_columns();
const FeatureColumns& custom_feature_columns();

}  // namespace tzrec::datagen
