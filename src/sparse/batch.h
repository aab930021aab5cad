// One training/eval batch after feature generation: data group __BASE__ and, with a negative
// sampler, __NEG__.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <torch/torch.h>

#include "sparse/keyed_jagged_tensor.h"
#include "sparse/keyed_tensor.h"

namespace tzrec::sparse {

struct Batch {
  int64_t batch_size = 0;
  KeyedJaggedTensor sparse_features;               // sparse features, keys = feature names
  KeyedTensor dense_features;                      // dense features [B, value_dim] per feature
  // Sequence features (feature/feature.h): a sparse sequence is a key of sparse_features whose
  // lengths count its items per row (one id per item) or its ids per row (several ids per item,
  // counted per item in sequence_item_lengths); a dense sequence's items are rows of
  // sequence_dense_features. Every sequence feature has its items per row in sequence_lengths.
  std::map<std::string, torch::Tensor> sequence_lengths;        // [B] int64
  std::map<std::string, torch::Tensor> sequence_item_lengths;   // [ΣL] int64 ids per item
  std::map<std::string, torch::Tensor> sequence_dense_features; // [ΣL, value_dim] float32
  // Data group __NEG__ (negative samplers): the features of sampled items over the batch's rows
  // followed by the sampled negatives' rows — neg_batch_size = batch_size + negatives (just
  // batch_size where no sampler runs, as in predict). hard_neg_indices [H, 2] int64 (hard
  // samplers): per hard negative (the last H negatives), the row of its user and its position in
  // that user's list; undefined otherwise.
  int64_t neg_batch_size = 0;
  // data_config.force_base_data_group with sampled negatives: every feature is in __BASE__, over
  // the batch's rows followed by the negatives' (the batch's own features zero-padded, as
  // TorchEasyRec pads them); base_rows() = neg_batch_size then, while labels keep batch_size rows.
  bool base_padded = false;
  int64_t base_rows() const { return base_padded ? neg_batch_size : batch_size; }
  KeyedJaggedTensor neg_sparse_features;
  KeyedTensor neg_dense_features;
  torch::Tensor hard_neg_indices;
  // A sampler drawing negatives for a candidate sequence (feature/data_groups.h,
  // CandidateSequence): each row's own items of that sequence (its positives), [B] int64
  // (TorchEasyRec's CAND_POS_LENGTHS); the sequence's last row holds its positives followed by
  // the negatives, and hard_neg_indices' rows count the positives of all rows in order.
  // Undefined otherwise.
  torch::Tensor candidate_pos_lengths;
  std::map<std::string, torch::Tensor> labels;     // [B] float32 (int columns become float32 too)
  // Labels read from list columns (TorchEasyRec's jagged labels, one value per candidate item of
  // the generative models): values [Σ n_b] float32 and lengths [B] int64, keyed like labels.
  std::map<std::string, torch::Tensor> jagged_label_values;
  std::map<std::string, torch::Tensor> jagged_label_lengths;
  // Rows of a model's predictions per batch row, [B] int64 (TorchEasyRec's
  // TARGET_REPEAT_INTERLEAVE_KEY: a generative model predicts each row's candidates); undefined
  // when predictions have one row per batch row. Set on the batch the losses and metrics read.
  torch::Tensor prediction_repeats;
  std::map<std::string, torch::Tensor> sample_weights;  // [B] float32

  Batch to(const torch::Device& device) const;
};

}  // namespace tzrec::sparse
