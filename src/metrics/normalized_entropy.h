// Normalized entropy (tzrec metric "normalized_entropy", docs/tzrec-compatibility.md §7.2) on probabilities:
//   NE = Σ_b BCE(p_b, y_b) / −(Σy · log ȳ + (N − Σy) · log(1 − ȳ)),  ȳ = Σy / N clamped to [eta, 1 − eta],
// i.e. the log loss divided by the entropy of the base rate. BCE follows
// torch.nn.functional.binary_cross_entropy: each log term is clamped to >= −100.
// Mergeable: the state is (Σ BCE, Σ y, N); sync() sums it over ranks.
#pragma once

#include <cstdint>

#include <torch/torch.h>

#include "dist/process_group.h"

namespace tzrec::metrics {

class NormalizedEntropy {
 public:
  // Throws tzrec::ConfigError unless 0 <= eta < 0.5.
  explicit NormalizedEntropy(double eta = 1e-12);

  // probs: [B] in [0, 1] (else tzrec::DataError); labels: [B] in [0, 1].
  void update(const torch::Tensor& probs, const torch::Tensor& labels);
  void merge(const NormalizedEntropy& other);
  // Replaces (Σ BCE, Σ y, N) by their sums over all ranks (one float64 all_reduce; N is exact in
  // float64 below 2^53 samples). Once per evaluation, before compute() (metrics/metric_sync.h).
  void sync(dist::ProcessGroup& pg);
  // NaN when no sample was seen.
  double compute() const;
  void reset();

 private:
  double eta_;
  double sum_bce_ = 0.0;
  double sum_label_ = 0.0;
  int64_t count_ = 0;
  bool synced_ = false;  // sync() ran since construction / reset()
};

}  // namespace tzrec::metrics
