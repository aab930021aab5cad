// The mergeable state of the accuracy metrics: samples judged correct out of samples seen.
#pragma once

#include <cstdint>

#include "dist/process_group.h"

namespace tzrec::metrics::detail {

class HitRate {
 public:
  // `hits` of `samples` more; refused after sync() (until reset()).
  void add(int64_t hits, int64_t samples);
  void merge(const HitRate& other);
  // Replaces (hits, samples) by their sums over all ranks (one int64 all_reduce); once per
  // evaluation, a second call is a no-op (metrics/metric_sync.h).
  void sync(dist::ProcessGroup& pg);
  // hits / samples; 0 when no sample was seen (torchmetrics' _safe_divide).
  double value() const;
  void reset();

  int64_t samples() const { return samples_; }
  bool synced() const { return synced_; }

 private:
  int64_t hits_ = 0;
  int64_t samples_ = 0;
  bool synced_ = false;  // sync() ran since construction / reset()
};

}  // namespace tzrec::metrics::detail
