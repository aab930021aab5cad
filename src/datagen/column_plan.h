// The column plan of a pipeline config: every column the config's features, labels, sample
// weights, sample cost and negative sampler read, each once, in first-use order (features in
// config order, then labels, sample weights, the cost column, sampler id columns).
//
// Negative samplers (negative_sampler, negative_sampler_v2, hard_negative_sampler,
// hard_negative_sampler_v2): the columns named by attr_fields are item attributes and
// item_id_field holds integer item ids, so that the rows and the item table agree; the *_v2 and
// hard samplers also read integer user ids from user_id_field. When item_id_field is a column of
// a grouped sequence_feature (a candidate sequence, as in TorchEasyRec's HSTU configs), every
// element of the sequence is an item id and, as TorchEasyRec's dataset does
// (tzrec/datasets/dataset.py, launch_sampler_cluster), the attr_fields name the sub-features of
// that sequence: "video_id" reads column "cand_seq__video_id", one value per element. tdm_sampler: the attr_fields but
// "tree_level" and item_id_field are item columns (the tree is built from the items, sampler_tables.h).
#pragma once

#include <string>
#include <vector>

#include "datagen/column_spec.h"
#include "datagen/generative_layout.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::datagen {

struct SamplerInfo {
  std::string type;  // oneof field name ("negative_sampler", ...); empty: no sampler
  std::string path;  // "data_config.<type>"
  std::string item_id_field;
  std::string user_id_field;  // empty for negative_sampler
  // The item attribute columns: the config's attr_fields, prefixed with sequence_prefix.
  std::vector<std::string> attr_fields;
  // "<sequence_name>__" when item_id_field is a column of that grouped sequence; else empty.
  std::string sequence_prefix;
  std::string attr_delimiter = ":";
  std::string field_delimiter = "\t";  // between the fields of a table line
  std::string multival_sep = "\x1d";   // inside a multi-value attribute (data::sampler_multival_sep)
};

struct ColumnPlan {
  std::vector<ColumnSpec> columns;
  SamplerInfo sampler;
  // Set for generative-recommendation configs (generative_layout.h): which columns hold the
  // user histories, the candidates and their per-candidate labels.
  GenerativeLayout generative;

  // Index of the column `name`, or -1.
  int index_of(const std::string& name) const;
  const ColumnSpec* find(const std::string& name) const;
};

// Builds the plan from a parsed (not validated) config. Throws ConfigError naming the field
// path when a column's type cannot be inferred or two readers disagree, NotSupportedError for
// fg_mode FG_BUCKETIZE.
ColumnPlan plan_columns(const protos::EasyRecConfig& config);

}  // namespace tzrec::datagen
