// Input columns (data::RecordBatch: CSV text or typed Parquet columns, read through ColumnCells)
// -> sparse::Batch. Each feature parses its own column(s) (feature.h and the feature types it
// lists); the parser assembles their outputs: the KJT of sparse and sparse-sequence features in
// config order, the dense block, the sequence lengths and dense sequences, labels and weights.
// Labels (label_fields) and sample weights (sample_weight_fields) are float32 [B]; an empty or
// non-numeric cell is a DataError. A label in a Parquet list<number> column is a jagged label
// (Batch::jagged_label_values / _lengths: one value per list element, as TorchEasyRec reads list
// label columns for its generative models). A parser built without labels (prediction) neither reads nor
// requires those columns: the batch has no labels and no sample weights.
// Every DataError names file, line, column and feature, and says how to fix it.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "data/record_batch.h"
#include "feature/feature_registry.h"
#include "feature/hash.h"
#include "feature/recycled_vectors.h"
#include "feature/sample_mask.h"
#include "sparse/batch.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::feature {

class FeatureParser {
 public:
  // Hashing follows env USE_FARM_HASH_TO_BUCKETIZE, read here once.
  explicit FeatureParser(const protos::EasyRecConfig& config);
  // read_labels false: label_fields and sample_weight_fields are ignored (prediction).
  FeatureParser(const protos::EasyRecConfig& config, bool read_labels);
  FeatureParser(const protos::EasyRecConfig& config, bool read_labels, HashKind hash_kind);

  // Every column parse() reads, each once: feature inputs (config order), label_fields,
  // sample_weight_fields (the last two only when labels are read).
  std::vector<std::string> input_columns() const;

  // Thread-safe (const, no shared mutable state). Throws DataError on bad data. Under FG_DAG the
  // outputs of features that are other features' inputs are added to a copy of the batch first
  // (fg_dag.h).
  sparse::Batch parse(const data::RecordBatch& batch) const;
  // The same on a batch the caller gives up: under FG_DAG the added columns go into it instead of
  // a copy (the loader's workers, whose batches are dropped afterwards). With a negative sampler,
  // `neg_rows` holds the __NEG__ features' columns over the batch's rows followed by the sampled
  // negatives' (negative_rows.h); nullptr: they read `batch` (no negatives, as in predict). With a
  // candidate sequence (data_groups.h) `neg_rows` holds the negatives' rows only: the sequence's
  // sub-features parse them as one item each, appended to the batch's last row of the sequence
  // (not truncated by sequence_length), and Batch::candidate_pos_lengths keeps the rows' own items.
  // `masks` (training, sample_mask.h): the batch's rows' and negatives' masks, which features with
  // use_mask read their first non-map input through; nullptr: none.
  sparse::Batch parse_in_place(data::RecordBatch* batch, const data::RecordBatch* neg_rows = nullptr,
                               const SampleMasks* masks = nullptr) const;

  const std::vector<FeaturePtr>& features() const { return features_.features; }
  // The columns data group __NEG__'s features read (the sampler's attr_fields they use), each once;
  // with a candidate sequence, those its sub-features read.
  std::vector<std::string> neg_input_columns() const;
  // The sequence the sampler's negatives join (data_groups.h), or nullopt.
  const std::optional<CandidateSequence>& candidate() const { return features_.candidate; }

 private:
  sparse::Batch parse_rows(const data::RecordBatch& batch, const data::RecordBatch* neg_rows,
                           const SampleMasks* masks) const;
  // Which features parse_group parses: data group __BASE__, __NEG__, or the candidate sequence's
  // sub-features (over its negatives' rows, data_groups.h).
  enum class Group { kBase, kNeg, kCandidate };
  // The features of `group` over `batch` into *sparse_out / *dense_out; sequences (base and
  // candidate) into `out`'s sequence maps. `mask` (one per row of `batch`, or nullptr): the rows
  // whose first non-map input the group's use_mask features read as empty.
  void parse_group(const data::RecordBatch& batch, Group group, sparse::KeyedJaggedTensor* sparse_out,
                   sparse::KeyedTensor* dense_out, sparse::Batch* out,
                   const std::vector<uint8_t>* mask = nullptr) const;

  FeatureSet features_;
  std::vector<std::string> label_fields_;
  std::vector<std::string> sample_weight_fields_;
  HashKind hash_kind_;
  // The most sparse values a batch has had: later batches reserve that much at once (sequences
  // hold many ids per row; growing the vector batch after batch copied them again and again).
  std::unique_ptr<std::atomic<size_t>> values_hint_ = std::make_unique<std::atomic<size_t>>(0);
  // The KJT buffers of batches handed out, back for later batches once freed (a few per loader
  // worker are in flight).
  static constexpr size_t kRecycledBatches = 4;
  std::shared_ptr<RecycledVectors<int64_t>> recycled_values_ =
      RecycledVectors<int64_t>::create(kRecycledBatches);
  std::shared_ptr<RecycledVectors<int64_t>> recycled_lengths_ =
      RecycledVectors<int64_t>::create(kRecycledBatches);
  std::shared_ptr<RecycledVectors<float>> recycled_weights_ =
      RecycledVectors<float>::create(kRecycledBatches);
};

}  // namespace tzrec::feature
