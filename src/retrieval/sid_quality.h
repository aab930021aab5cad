// Collision and distribution quality of semantic IDs (TorchEasyRec's tzrec/utils/sid/quality.py,
// used by `tzrec evaluate_sid_quality`; docs/tzrec-compatibility.md §3.5), no torch.
//
// An item's SID is its codes, one per layer, code l in [0, codebook[l]); the SID's bucket is the
// mixed-radix number Σ code_l · Π_{j>l} codebook[j] (so the capacity Π codebook must fit int64).
// Over all items added:
//   total                          items
//   unique_sid                     occupied buckets
//   no_collision_rate              unique_sid / total
//   uniquely_identified_item_rate  items alone in their bucket / total
//   max_collision                  items in the fullest bucket
//   gini                           Gini coefficient of the occupied buckets' sizes
//   entropy                        Shannon entropy (nats) of the buckets' shares of the items
//   max_entropy                    ln(capacity); entropy_ratio = entropy / max_entropy (NaN when
//                                  the capacity is 1)
// and per layer: coverage (codes used / codebook size), dead_codes (codes never used), perplexity
// (exp of the entropy of the layer's code usage). The exact counts need 8 bytes per item until
// finalize().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tzrec::retrieval {

struct SidQualityMetrics {
  int64_t total = 0;
  int64_t unique_sid = 0;
  double no_collision_rate = 0;
  double uniquely_identified_item_rate = 0;
  int64_t max_collision = 0;
  double gini = 0;
  double entropy = 0;
  double max_entropy = 0;
  double entropy_ratio = 0;
};

struct SidLayerQualityMetrics {
  int64_t layer = 0;
  int64_t codebook_size = 0;
  double coverage = 0;
  int64_t dead_codes = 0;
  double perplexity = 0;
};

struct SidQualityResult {
  SidQualityMetrics metrics;
  std::vector<SidLayerQualityMetrics> layer_metrics;  // layer 0 first
  // With top_sids > 0: the most frequent SIDs ("1,2,3") and their item counts, most frequent
  // first, ties in ascending bucket order.
  std::optional<std::vector<std::pair<std::string, int64_t>>> top_sids;
};

// Gini coefficient of `counts` (in [0, 1); 0 for no counts or all zero).
double sid_gini(std::vector<int64_t> counts);
// Shannon entropy in nats of the distribution `counts` (zero counts allowed; 0 when they sum to 0).
double sid_entropy(const std::vector<int64_t>& counts);

// Throws UsageError when `codebook` is empty, has a size < 1, or its product exceeds int64
// ("--codebook capacity (product = ...) exceeds int64").
void check_sid_codebook(const std::vector<int64_t>& codebook);

class SidQualityAccumulator {
 public:
  // `top_sids` > 0 keeps that many most frequent SIDs in the result. Checks the codebook
  // (check_sid_codebook).
  explicit SidQualityAccumulator(std::vector<int64_t> codebook, int64_t top_sids = 0);

  // Adds one item's codes (codebook().size() of them, each inside its codebook: the caller has
  // checked with sid_row_problem, sid_codes.h).
  void add(const int64_t* codes);
  int64_t total() const { return static_cast<int64_t>(buckets_.size()); }
  const std::vector<int64_t>& codebook() const { return codebook_; }

  // The metrics over everything added; releases the buckets. Throws DataError when nothing was
  // added, UsageError when called twice.
  SidQualityResult finalize();

 private:
  std::vector<int64_t> codebook_;
  std::vector<int64_t> radix_;  // radix_[l] = Π_{j>l} codebook[j]
  int64_t top_sids_ = 0;
  std::vector<int64_t> buckets_;  // one per item added
  std::vector<std::vector<int64_t>> layer_counts_;
  bool finalized_ = false;
};

// after − before, metric by metric and layer by layer (layer and codebook_size kept, no top SIDs).
// Throws DataError when the two results cover different item counts or codebooks.
SidQualityResult compare_sid_quality(const SidQualityResult& before, const SidQualityResult& after);

}  // namespace tzrec::retrieval
