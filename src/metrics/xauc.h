// XAUC and grouped XAUC (tzrec metrics "xauc" and "grouped_xauc",
// docs/tzrec-compatibility.md §7.2): pairwise concordance of a regression prediction with its
// target (e.g. watch time).
//
// Pair counting: a pair (i, j), i != j, is concordant when its targets and predictions are strictly
// ordered the same way: (t_i < t_j and p_i < p_j) or (t_i > t_j and p_i > p_j) — TorchEasyRec's
// (t_i - t_j) * (p_i - p_j) > 0. A pair tied in its targets or in its predictions is neither
// concordant nor skipped: it counts in the denominator only. XAUC = concordant pairs / pairs
// considered. (Values are compared directly, so a product of two tiny differences that would
// underflow to 0 in float32 still counts as concordant here.)
//
// TorchEasyRec draws its pairs uniformly with replacement from the n(n-1)/2 pairs of the eval set;
// the expectation of that estimate is the exact all-pairs value, which exact_xauc() computes in
// O(n log n). Sampling here uses an explicit seed, so results are reproducible.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "base/stable_hash.h"
#include "dist/process_group.h"

namespace tzrec::metrics {

// Number of concordant pairs among all n(n-1)/2 pairs (see above); O(n log n).
uint64_t count_concordant_pairs(const std::vector<float>& preds, const std::vector<double>& targets);
// count_concordant_pairs / (n(n-1)/2); NaN when n < 2.
double exact_xauc(const std::vector<float>& preds, const std::vector<double>& targets);

// Deterministic 64-bit generator (splitmix64) used for pair sampling; the same seed gives the same
// pairs on every platform.
class PairSampler {
 public:
  explicit PairSampler(uint64_t seed) : stream_(seed) {}
  // Uniform pair (i, j), i < j < n, with n >= 2.
  std::pair<uint64_t, uint64_t> next_pair(uint64_t n);

 private:
  uint64_t next();
  uint64_t uniform(uint64_t bound);  // uniform in [0, bound), bound >= 1
  SplitMix64 stream_;
};

// Fraction of concordant pairs among `num_pairs` pairs drawn uniformly with replacement
// (TorchEasyRec's sampling_xauc). NaN when n < 2 or num_pairs == 0.
double sampled_xauc(const std::vector<float>& preds, const std::vector<double>& targets, uint64_t num_pairs,
                    PairSampler& sampler);

struct XAucOptions {
  // Fraction of the n(n-1)/2 pairs to sample: floor(n(n-1)/2 * sample_ratio) pairs; in (0, 1].
  double sample_ratio = 1e-3;
  // When > 0: sample this many pairs and ignore sample_ratio.
  uint64_t max_pairs = 0;
  // Per-batch all-pairs XAUC, averaged over batches (unweighted); sampling options are ignored.
  bool in_batch = false;
  // Seed of the pair sampler.
  uint64_t seed = 0;
  // compute() returns the exact value (the expectation of the sampled estimate) instead of a sample
  // when the eval set has at most this many pairs, when the sample would be empty (TorchEasyRec:
  // NaN) or hold at least as many pairs as there are (TorchEasyRec rejects max_pairs >= n(n-1)/2),
  // or when it would hold at least 4 n ceil(log2 n) pairs (the exact count is then cheaper).
  uint64_t exact_pair_limit = 10'000'000;
};

class XAuc {
 public:
  // Throws tzrec::ConfigError when sample_ratio is not in (0, 1].
  explicit XAuc(XAucOptions options = {});

  // preds, targets: [B] numeric, same number of elements. Throws tzrec::DataError for NaN predictions
  // or targets. in_batch: a batch with fewer than 2 rows has no pair and is skipped (TorchEasyRec
  // would average in a NaN).
  void update(const torch::Tensor& preds, const torch::Tensor& targets);
  // Concatenates the samples (or per-batch values with in_batch) of `other`.
  void merge(const XAuc& other);
  // Replaces the state by every rank's samples (or per-batch values with in_batch), in rank order
  // (one float64 all_gather), so that compute() then samples from the pairs of all ranks' rows.
  // Once per evaluation, before compute() (metrics/metric_sync.h).
  void sync(dist::ProcessGroup& pg);
  // See XAucOptions. NaN when there is no pair (fewer than 2 samples, or no batch with 2 rows).
  // The sampled estimate restarts its sampler from `seed` on every call, so it is repeatable.
  double compute() const;
  // Exact all-pairs value over every sample seen (not available with in_batch: UsageError).
  double compute_exact() const;
  void reset();

  int64_t num_samples() const { return static_cast<int64_t>(preds_.size()); }
  const XAucOptions& options() const { return options_; }

 private:
  XAucOptions options_;
  std::vector<float> preds_;
  std::vector<double> targets_;
  std::vector<double> batch_values_;  // in_batch: exact XAUC of each batch with >= 2 rows
  bool synced_ = false;               // sync() ran since construction / reset()
};

// Grouped XAUC: per group with more than one row, XAUC of the group (at most max_pairs_per_group
// sampled pairs), averaged with weights = group size. A group with at most max_pairs_per_group
// pairs gets its exact value (TorchEasyRec samples that many pairs with replacement; the exact value
// is their expectation), as does a group of n rows when max_pairs_per_group >= 4 n ceil(log2 n)
// (exact is then cheaper); other groups are sampled, in ascending group id order, from one sampler
// seeded with `seed`. Single-row groups are skipped, as in TorchEasyRec. Mergeable: the state is
// every (group, pred, target) sample seen.
class GroupedXAuc {
 public:
  // max_pairs_per_group 0 means the default 100 (as TorchEasyRec).
  explicit GroupedXAuc(uint64_t max_pairs_per_group = 100, uint64_t seed = 0);

  // preds, targets: [B] numeric; groups: [B] integer group ids. Throws tzrec::DataError for NaN.
  void update(const torch::Tensor& preds, const torch::Tensor& targets, const torch::Tensor& groups);
  void merge(const GroupedXAuc& other);
  // Replaces the state by every rank's (group, pred, target) samples, in rank order (one int64
  // all_gather carrying the group id and the bits of the values), so groups split across ranks are
  // evaluated whole. Once per evaluation, before compute() (metrics/metric_sync.h).
  void sync(dist::ProcessGroup& pg);
  // NaN (with a warning) when no group has two rows.
  double compute() const;
  // Number of groups with at least two rows among the samples seen.
  int64_t num_valid_groups() const;
  void reset();

  uint64_t max_pairs_per_group() const { return max_pairs_per_group_; }

 private:
  uint64_t max_pairs_per_group_;
  uint64_t seed_;
  std::vector<int64_t> groups_;
  std::vector<float> preds_;
  std::vector<double> targets_;
  bool synced_ = false;  // sync() ran since construction / reset()
};

}  // namespace tzrec::metrics
