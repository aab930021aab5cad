#include "retrieval/sid_quality.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::retrieval {

double sid_gini(std::vector<int64_t> counts) {
  if (counts.empty()) return 0.0;
  std::sort(counts.begin(), counts.end());
  const int64_t n = static_cast<int64_t>(counts.size());
  __int128 sum = 0, ranked = 0;
  // The smallest count has rank n, the largest rank 1: Gini = (n + 1) / n − 2 Σ rank·x / (n Σ x).
  for (int64_t i = 0; i < n; ++i) {
    sum += counts[static_cast<size_t>(i)];
    ranked += static_cast<__int128>(counts[static_cast<size_t>(i)]) * (n - i);
  }
  if (sum == 0) return 0.0;
  const double nd = static_cast<double>(n);
  return (nd + 1) / nd - 2 * static_cast<double>(ranked) / (nd * static_cast<double>(sum));
}

double sid_entropy(const std::vector<int64_t>& counts) {
  double total = 0;
  for (int64_t c : counts) total += static_cast<double>(c);
  if (total == 0) return 0.0;
  double h = 0;
  for (int64_t c : counts) {
    if (c > 0) {
      const double p = static_cast<double>(c) / total;
      h -= p * std::log(p);
    }
  }
  return h;
}

void check_sid_codebook(const std::vector<int64_t>& codebook) {
  if (codebook.empty()) throw UsageError("--codebook: give the codebook size of each layer, e.g. 256,256,256");
  __int128 capacity = 1;
  bool overflow = false;
  for (int64_t size : codebook) {
    if (size < 1) throw UsageError(fmt::format("--codebook: sizes must be positive integers, got {}", size));
    capacity *= size;
    if (capacity > std::numeric_limits<int64_t>::max()) overflow = true;
    if (overflow) capacity = std::numeric_limits<int64_t>::max();  // keep the product from wrapping
  }
  if (overflow) {
    // The exact product in decimal, for the message.
    std::vector<uint32_t> digits{1};  // little-endian base 10^9
    for (int64_t size : codebook) {
      uint64_t carry = 0;
      for (uint32_t& d : digits) {
        const unsigned __int128 v = static_cast<unsigned __int128>(d) * static_cast<uint64_t>(size) + carry;
        d = static_cast<uint32_t>(v % 1000000000u);
        carry = static_cast<uint64_t>(v / 1000000000u);
      }
      while (carry > 0) {
        digits.push_back(static_cast<uint32_t>(carry % 1000000000u));
        carry /= 1000000000u;
      }
    }
    std::string product = std::to_string(digits.back());
    for (size_t i = digits.size() - 1; i-- > 0;) product += fmt::format("{:09d}", digits[i]);
    throw UsageError(fmt::format(
        "--codebook capacity (product = {}) exceeds int64; collision analysis is not supported at that scale", product));
  }
}

SidQualityAccumulator::SidQualityAccumulator(std::vector<int64_t> codebook, int64_t top_sids)
    : codebook_(std::move(codebook)), top_sids_(top_sids) {
  check_sid_codebook(codebook_);
  if (top_sids < 0) throw UsageError(fmt::format("top SIDs: must be positive, got {}", top_sids));
  radix_.assign(codebook_.size(), 1);
  for (size_t l = codebook_.size() - 1; l-- > 0;) radix_[l] = radix_[l + 1] * codebook_[l + 1];
  for (int64_t size : codebook_) layer_counts_.emplace_back(static_cast<size_t>(size), 0);
}

void SidQualityAccumulator::add(const int64_t* codes) {
  if (finalized_) throw UsageError("SID quality: add after finalize");
  int64_t bucket = 0;
  for (size_t l = 0; l < codebook_.size(); ++l) {
    bucket += codes[l] * radix_[l];
    ++layer_counts_[l][static_cast<size_t>(codes[l])];
  }
  buckets_.push_back(bucket);
}

SidQualityResult SidQualityAccumulator::finalize() {
  if (finalized_) throw UsageError("SID quality: finalize called twice");
  finalized_ = true;
  if (buckets_.empty()) throw DataError("SID quality: no valid SID codes were added; nothing to report");
  const int64_t total = static_cast<int64_t>(buckets_.size());
  std::sort(buckets_.begin(), buckets_.end());
  std::vector<int64_t> ids, counts;  // occupied buckets in ascending order, their item counts
  for (size_t i = 0; i < buckets_.size();) {
    size_t j = i + 1;
    while (j < buckets_.size() && buckets_[j] == buckets_[i]) ++j;
    ids.push_back(buckets_[i]);
    counts.push_back(static_cast<int64_t>(j - i));
    i = j;
  }
  std::vector<int64_t>().swap(buckets_);

  SidQualityResult result;
  SidQualityMetrics& m = result.metrics;
  m.total = total;
  m.unique_sid = static_cast<int64_t>(ids.size());
  m.no_collision_rate = static_cast<double>(m.unique_sid) / static_cast<double>(total);
  const int64_t singletons = std::count(counts.begin(), counts.end(), int64_t{1});
  m.uniquely_identified_item_rate = static_cast<double>(singletons) / static_cast<double>(total);
  m.max_collision = *std::max_element(counts.begin(), counts.end());
  m.gini = sid_gini(counts);
  m.entropy = sid_entropy(counts);
  // ln of the capacity taken once (a sum of the layers' logs can differ in the last bit).
  int64_t capacity = 1;
  for (int64_t size : codebook_) capacity *= size;
  m.max_entropy = std::log(static_cast<double>(capacity));
  m.entropy_ratio = m.max_entropy != 0 ? m.entropy / m.max_entropy : std::numeric_limits<double>::quiet_NaN();

  for (size_t l = 0; l < codebook_.size(); ++l) {
    const std::vector<int64_t>& usage = layer_counts_[l];
    const int64_t used = static_cast<int64_t>(usage.size()) - std::count(usage.begin(), usage.end(), int64_t{0});
    SidLayerQualityMetrics layer;
    layer.layer = static_cast<int64_t>(l);
    layer.codebook_size = codebook_[l];
    layer.coverage = static_cast<double>(used) / static_cast<double>(codebook_[l]);
    layer.dead_codes = codebook_[l] - used;
    layer.perplexity = std::exp(sid_entropy(usage));
    result.layer_metrics.push_back(layer);
  }

  if (top_sids_ > 0) {
    std::vector<size_t> order(ids.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return counts[a] > counts[b]; });
    order.resize(std::min(order.size(), static_cast<size_t>(top_sids_)));
    std::vector<std::pair<std::string, int64_t>> top;
    for (size_t i : order) {
      std::string sid;
      for (size_t l = 0; l < codebook_.size(); ++l) {
        if (l > 0) sid += ',';
        sid += std::to_string((ids[i] / radix_[l]) % codebook_[l]);
      }
      top.emplace_back(std::move(sid), counts[i]);
    }
    result.top_sids = std::move(top);
  }
  return result;
}

SidQualityResult compare_sid_quality(const SidQualityResult& before, const SidQualityResult& after) {
  if (before.metrics.total != after.metrics.total) {
    throw DataError(fmt::format("SID quality: before and after cover different items ({} and {})",
                                before.metrics.total, after.metrics.total));
  }
  if (before.layer_metrics.size() != after.layer_metrics.size()) {
    throw DataError("SID quality: before and after have different layer counts");
  }
  SidQualityResult d;
  for (size_t l = 0; l < after.layer_metrics.size(); ++l) {
    const SidLayerQualityMetrics& b = before.layer_metrics[l];
    const SidLayerQualityMetrics& a = after.layer_metrics[l];
    if (a.layer != b.layer || a.codebook_size != b.codebook_size) {
      throw DataError("SID quality: before and after use different codebooks");
    }
    d.layer_metrics.push_back(
        {a.layer, a.codebook_size, a.coverage - b.coverage, a.dead_codes - b.dead_codes, a.perplexity - b.perplexity});
  }
  const SidQualityMetrics& b = before.metrics;
  const SidQualityMetrics& a = after.metrics;
  d.metrics = {a.total - b.total,
               a.unique_sid - b.unique_sid,
               a.no_collision_rate - b.no_collision_rate,
               a.uniquely_identified_item_rate - b.uniquely_identified_item_rate,
               a.max_collision - b.max_collision,
               a.gini - b.gini,
               a.entropy - b.entropy,
               a.max_entropy - b.max_entropy,
               a.entropy_ratio - b.entropy_ratio};
  return d;
}

}  // namespace tzrec::retrieval
