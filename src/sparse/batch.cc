#include "sparse/batch.h"

namespace tzrec::sparse {

Batch Batch::to(const torch::Device& device) const {
  Batch out;
  out.batch_size = batch_size;
  out.sparse_features = sparse_features.empty() ? sparse_features : sparse_features.to(device);
  out.dense_features = dense_features.to(device);
  for (const auto& [k, v] : sequence_lengths) out.sequence_lengths[k] = v.to(device);
  for (const auto& [k, v] : sequence_item_lengths) out.sequence_item_lengths[k] = v.to(device);
  for (const auto& [k, v] : sequence_dense_features) out.sequence_dense_features[k] = v.to(device);
  out.neg_batch_size = neg_batch_size;
  out.base_padded = base_padded;
  out.neg_sparse_features = neg_sparse_features.empty() ? neg_sparse_features : neg_sparse_features.to(device);
  out.neg_dense_features = neg_dense_features.to(device);
  if (hard_neg_indices.defined()) out.hard_neg_indices = hard_neg_indices.to(device);
  if (candidate_pos_lengths.defined()) out.candidate_pos_lengths = candidate_pos_lengths.to(device);
  for (const auto& [k, v] : labels) out.labels[k] = v.to(device);
  for (const auto& [k, v] : jagged_label_values) out.jagged_label_values[k] = v.to(device);
  for (const auto& [k, v] : jagged_label_lengths) out.jagged_label_lengths[k] = v.to(device);
  if (prediction_repeats.defined()) out.prediction_repeats = prediction_repeats.to(device);
  for (const auto& [k, v] : sample_weights) out.sample_weights[k] = v.to(device);
  return out;
}

}  // namespace tzrec::sparse
