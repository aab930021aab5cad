// Grouped AUC (tzrec metric "grouped_auc", docs/tzrec-compatibility.md §7.2): exact ROC AUC per
// group (ties between a positive and a negative count 1/2, as torchmetrics' unbinned
// _binary_auroc_compute), groups whose labels are all 0 or all 1 skipped, result = unweighted mean
// over the remaining groups.
// Mergeable: the state is every (group, pred, label) sample seen; sync() gathers every rank's samples
// (metrics/metric_sync.h), so groups split across ranks are evaluated whole.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "dist/process_group.h"

namespace tzrec::metrics {

class GroupedAuc {
 public:
  // preds: [B] floating (probabilities); labels: [B] values 0 / 1; groups: [B] integer group ids.
  // Throws tzrec::DataError for labels other than 0 / 1 or NaN predictions.
  void update(const torch::Tensor& preds, const torch::Tensor& labels, const torch::Tensor& groups);
  void merge(const GroupedAuc& other);
  // Replaces the state by every rank's samples, in rank order (one int64 all_gather: group id,
  // float32 bits of the prediction, label). Once per evaluation, before compute().
  void sync(dist::ProcessGroup& pg);
  // 0 when no group has both labels (and a warning is logged).
  double compute() const;
  // Number of groups with both labels among the samples seen.
  int64_t num_valid_groups() const;
  void reset();

 private:
  std::vector<int64_t> groups_;
  std::vector<float> preds_;
  std::vector<uint8_t> labels_;
  bool synced_ = false;  // sync() ran since construction / reset()
};

// Exact AUC of one set of samples (ties 1/2); NaN when there is no positive or no negative.
double exact_binary_auc(std::vector<std::pair<float, uint8_t>> samples);

}  // namespace tzrec::metrics
