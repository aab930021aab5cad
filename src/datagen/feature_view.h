// Reading feature messages for the column producers (feature_columns.h): protobuf reflection
// over the fields every feature message shares by name (feature_name, expression,
// hash_bucket_size, vocab_list, boundaries, value_dim, separator, ...), input names
// ("side:name"), the column names of each fg_mode, and the id ranges of bucketizers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <google/protobuf/message.h>

#include "datagen/column_spec.h"
#include "datagen/feature_columns.h"

namespace tzrec::datagen {

// Cardinality of raw ids of hashed inputs (hash_bucket_size, zch, ...): small enough that ids
// repeat, so that their embeddings can be learnt from a few thousand rows.
inline constexpr int64_t kHashedIdCardinality = 1000;

// Field access by name; absent fields read as unset / empty.
bool has_field(const google::protobuf::Message& m, const std::string& name);
std::string string_field(const google::protobuf::Message& m, const std::string& name);
uint64_t uint_field(const google::protobuf::Message& m, const std::string& name);
bool bool_field(const google::protobuf::Message& m, const std::string& name);
// A repeated string field, or a singular one as a list of one (empty when unset).
std::vector<std::string> strings_field(const google::protobuf::Message& m, const std::string& name);
std::vector<double> floats_field(const google::protobuf::Message& m, const std::string& name);
// Keys and values of a map<string, uint64 | float> field, in declaration order.
std::vector<std::pair<std::string, double>> map_field(const google::protobuf::Message& m,
                                                      const std::string& name);
// An integer field of a sub-message ("zch", "zch_size"); nullopt when either is unset.
std::optional<uint64_t> sub_uint_field(const google::protobuf::Message& m, const std::string& sub,
                                       const std::string& name);

struct FeatureInput {
  std::string side;  // user | item | context | feature | const
  std::string name;  // the input name
  std::string field; // field path of the expression, for messages
};

// Parses "side:name" of field `field` (value `text`); ConfigError naming the field otherwise.
FeatureInput parse_input(const std::string& text, const std::string& field);

// The inputs of `field` (a singular or repeated string field) of the feature.
std::vector<FeatureInput> inputs_of(const FeatureContext& f, const std::string& field);

// Whether an id feature's cells hold several values: value_dim 0 when value_dim is set; else
// when `pooling` or `separator` is set (which only matter for multi-value inputs). Otherwise,
// and always inside sequences, one value per cell, as most id inputs (user and item ids) are.
bool is_multi_value(const FeatureContext& f);

// value_dim when set, else `default_value`.
int value_dim_or(const FeatureContext& f, int default_value);

// The column of a feature in FG_NONE: feature_name, or {sequence_name}__{feature_name}.
std::string fg_encoded_column(const FeatureContext& f);

// True for FG_NONE / FG_BUCKETIZE (columns named after features).
bool reads_fg_output(const FeatureContext& f);

// Whether `input` is sequence-valued (docs: sequence_fields when given; else single-input
// feature types take their non-`feature:` input as a sequence, multi-input types their
// `item:` inputs).
bool is_sequence_input(const FeatureContext& f, const FeatureInput& input, bool single_input_type);

// A column spec for one raw input of `f` (FG_NORMAL / FG_DAG), with the sequence settings and
// the grouped-sequence column prefix applied; nullopt for inputs that are not columns
// (`feature:` and `const:` inputs under FG_DAG, which the feature DAG computes).
std::optional<ColumnSpec> input_column(const FeatureContext& f, const FeatureInput& input,
                                       bool single_input_type);

// The FG_NONE column of `f` (sequence settings applied): sparse ids in [0, num_ids) (a list of
// 1..3 ids when multi_value, "id:weight" pairs when weighted), or `dense_dim` floats.
ColumnSpec fg_encoded_sparse_column(const FeatureContext& f, int64_t num_ids, bool multi_value,
                                    bool weighted = false);
ColumnSpec fg_encoded_dense_column(const FeatureContext& f, int dense_dim);

// Table rows of a sparse feature from its bucketizer (docs/tzrec-compatibility.md §5.4):
// zch.zch_size > dynamicemb.max_capacity > hash_bucket_size > num_buckets > the effective
// vocab_list > max(vocab_dict) + 1 > the vocab_file size > len(boundaries) + 1; nullopt when
// none is set.
std::optional<int64_t> bucketizer_rows(const FeatureContext& f);

// The raw-value domain of an id input under its bucketizer: vocab strings (vocab_list /
// vocab_dict keys / vocab_file tokens), ids in [0, num_buckets), or hashed ids. nullopt when no
// bucketizer is set.
std::optional<Domain> raw_id_domain(const FeatureContext& f);

// Raw numbers of a numeric input: spanning the boundaries when set, inside a minmax
// normalizer's range, positive for log10, around a zscore's mean, else uniform [0, 1).
Domain raw_number_domain(const FeatureContext& f);

// Table rows of a sparse feature, or ConfigError naming the feature when no bucketizer is set.
int64_t require_bucketizer_rows(const FeatureContext& f);

// Lays out the values of a raw input cell: one value for sequence elements and single-value
// readers, "value:weight" pairs joined by `separator` when weighted, else a list of 1..3 values.
void set_value_layout(const FeatureContext& f, bool multi_value, bool weighted, ColumnSpec* spec);

// The feature's `separator` (default "\x1d").
std::string separator_of(const FeatureContext& f);

// `f.path + "." + field`.
std::string field_path(const FeatureContext& f, const std::string& field);

}  // namespace tzrec::datagen
