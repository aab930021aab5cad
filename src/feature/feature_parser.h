// Input columns (data::RecordBatch: CSV text or typed Parquet columns, read through ColumnCells)
// -> sparse::Batch, for id_feature and raw_feature.
//
// data_config.fg_mode FG_NONE (default): the column named feature_name holds FG output.
//   sparse: integer ids split by fg_encoded_multival_sep ("\x03"); weighted features hold
//     "id:weight" tokens; an empty cell uses fg_encoded_default_value (split the same way; tokens
//     without ":w" get weight 1) or else gives an empty bag; ids outside [0, num_embeddings) are a
//     DataError. raw_feature with boundaries is sparse here too: the column holds bucket ids in
//     [0, len(boundaries) + 1) (docs/tzrec-compatibility.md §5.6: FG output of a bucketized feature is ids).
//   dense: value_dim floats split by the multival sep; an empty cell needs
//     fg_encoded_default_value (else DataError). No normalizer is applied (already FG output).
// FG_NORMAL / FG_DAG: the column is the input_name of `expression`; values are raw.
//   id_feature: empty cell -> default_value; split by `separator` ("\x1d"); empty tokens are no
//     value; weighted tokens "key:weight" (split at the last ':'); then hash_bucket_size (hash of
//     the text as is: "00012" hashes as "00012") | vocab_list | vocab_dict (default/OOV rules of
//     docs/tzrec-compatibility.md §5.4) | num_buckets (the value must be an integer in [0, num_buckets)).
//   raw_feature: empty cell -> default_value ("0"); split by `separator` into value_dim numbers
//     (a single default value is repeated value_dim times); normalizer; then with boundaries
//     bucket = number of boundaries <= value (std::upper_bound on float32 values: a value equal
//     to a boundary goes to the upper bucket, like TF / pyfg bucketize); else a dense float.
// Labels (label_fields) and sample weights (sample_weight_fields) are float32 [B]; an empty or
// non-numeric cell is a DataError. A parser built without labels (prediction) neither reads nor
// requires those columns: the batch has no labels and no sample weights.
// Every DataError names file, line, column and feature, and says how to fix it.
#pragma once

#include <string>
#include <vector>

#include "data/record_batch.h"
#include "feature/feature_spec.h"
#include "feature/hash.h"
#include "sparse/batch.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::feature {

class FeatureParser {
 public:
  // Hashing follows env USE_FARM_HASH_TO_BUCKETIZE, read here once.
  explicit FeatureParser(const protos::EasyRecConfig& config);
  // read_labels false: label_fields and sample_weight_fields are ignored (prediction).
  FeatureParser(const protos::EasyRecConfig& config, bool read_labels);
  FeatureParser(ParserSpec spec, HashKind hash_kind);

  // Every column parse() reads, each once: feature inputs (config order), label_fields,
  // sample_weight_fields (the last two only when labels are read).
  std::vector<std::string> input_columns() const;

  // Thread-safe (const, no shared mutable state). Throws DataError on bad data.
  sparse::Batch parse(const data::RecordBatch& batch) const;

  const ParserSpec& spec() const { return spec_; }

 private:
  ParserSpec spec_;
  HashKind hash_kind_;
};

}  // namespace tzrec::feature
