#include "metrics/xauc.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "base/error.h"
#include "base/logging.h"
#include "metrics/metric_sync.h"

namespace tzrec::metrics {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

uint64_t num_pairs(uint64_t n) { return n < 2 ? 0 : (n % 2 == 0 ? (n / 2) * (n - 1) : n * ((n - 1) / 2)); }

// Flattens preds (float32) and targets (float64) of one batch; throws DataError for NaN.
void read_batch(const char* metric, const torch::Tensor& preds, const torch::Tensor& targets,
                std::vector<float>* p_out, std::vector<double>* t_out) {
  if (preds.numel() != targets.numel()) {
    throw UsageError(fmt::format("{}: {} predictions but {} targets", metric, preds.numel(), targets.numel()));
  }
  torch::Tensor p = preds.detach().reshape({-1}).to(torch::kCPU, torch::kFloat32).contiguous();
  torch::Tensor t = targets.detach().reshape({-1}).to(torch::kCPU, torch::kFloat64).contiguous();
  if (torch::isnan(p).any().item<bool>()) {
    throw DataError(fmt::format("{}: got NaN predictions; the model output is not finite (did training diverge?)",
                                metric));
  }
  if (torch::isnan(t).any().item<bool>()) {
    throw DataError(fmt::format("{}: got NaN targets; fill or drop missing label values", metric));
  }
  p_out->assign(p.data_ptr<float>(), p.data_ptr<float>() + p.numel());
  t_out->assign(t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
}

// The exact count costs about n log2(n) steps, a sample one step per pair: past that many pairs the
// exact value (the sample's expectation) is both cheaper and noise-free.
bool exact_is_cheaper(uint64_t n, uint64_t to_draw) {
  uint64_t log2n = 1;
  while ((uint64_t{1} << log2n) < n && log2n < 63) ++log2n;
  return to_draw / 4 >= n * log2n || to_draw >= num_pairs(n);
}

}  // namespace

uint64_t count_concordant_pairs(const std::vector<float>& preds, const std::vector<double>& targets) {
  const size_t n = preds.size();
  TORCH_CHECK(targets.size() == n, "xauc: ", n, " predictions but ", targets.size(), " targets");
  if (n < 2) return 0;
  // Rank predictions (equal predictions share a rank).
  std::vector<float> sorted_preds(preds);
  std::sort(sorted_preds.begin(), sorted_preds.end());
  sorted_preds.erase(std::unique(sorted_preds.begin(), sorted_preds.end()), sorted_preds.end());
  std::vector<uint32_t> rank(n);
  for (size_t i = 0; i < n; ++i) {
    rank[i] = static_cast<uint32_t>(std::lower_bound(sorted_preds.begin(), sorted_preds.end(), preds[i]) -
                                    sorted_preds.begin());
  }
  // Visit samples by increasing target; for each block of equal targets, count the earlier samples
  // (strictly smaller target) with a strictly smaller prediction, then add the block to a Fenwick
  // tree over prediction ranks. Every concordant pair is counted once, from its larger-target side.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return targets[a] < targets[b]; });
  std::vector<uint64_t> tree(sorted_preds.size() + 1, 0);
  auto count_below = [&](uint32_t r) {  // inserted samples with rank < r
    uint64_t c = 0;
    for (uint32_t i = r; i > 0; i -= i & (~i + 1)) c += tree[i];
    return c;
  };
  auto insert = [&](uint32_t r) {
    for (uint32_t i = r + 1; i < tree.size(); i += i & (~i + 1)) tree[i] += 1;
  };
  uint64_t concordant = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && targets[order[j]] == targets[order[i]]) ++j;
    for (size_t k = i; k < j; ++k) concordant += count_below(rank[order[k]]);
    for (size_t k = i; k < j; ++k) insert(rank[order[k]]);
    i = j;
  }
  return concordant;
}

double exact_xauc(const std::vector<float>& preds, const std::vector<double>& targets) {
  const uint64_t pairs = num_pairs(preds.size());
  if (pairs == 0) return kNaN;
  return static_cast<double>(count_concordant_pairs(preds, targets)) / static_cast<double>(pairs);
}

uint64_t PairSampler::next() { return stream_.next(); }

uint64_t PairSampler::uniform(uint64_t bound) {
  // Rejection sampling: no modulo bias.
  const uint64_t limit = std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % bound;
  uint64_t x;
  do {
    x = next();
  } while (x >= limit);
  return x % bound;
}

std::pair<uint64_t, uint64_t> PairSampler::next_pair(uint64_t n) {
  // Flat index k over pairs ordered (0,1), (0,2), (1,2), (0,3), ...: row r holds the r + 1 pairs
  // (i, r + 1), i <= r, starting at r(r+1)/2 (TorchEasyRec's enumeration).
  const uint64_t k = uniform(num_pairs(n));
  uint64_t r = static_cast<uint64_t>((std::sqrt(8.0L * static_cast<long double>(k) + 1.0L) - 1.0L) / 2.0L);
  while (r > 0 && r * (r + 1) / 2 > k) --r;
  while ((r + 1) * (r + 2) / 2 <= k) ++r;
  return {k - r * (r + 1) / 2, r + 1};
}

double sampled_xauc(const std::vector<float>& preds, const std::vector<double>& targets, uint64_t num_pairs_to_draw,
                    PairSampler& sampler) {
  const uint64_t n = preds.size();
  TORCH_CHECK(targets.size() == n, "xauc: ", n, " predictions but ", targets.size(), " targets");
  if (n < 2 || num_pairs_to_draw == 0) return kNaN;
  uint64_t concordant = 0;
  for (uint64_t s = 0; s < num_pairs_to_draw; ++s) {
    auto [i, j] = sampler.next_pair(n);
    const bool t_less = targets[i] < targets[j], t_more = targets[i] > targets[j];
    const bool p_less = preds[i] < preds[j], p_more = preds[i] > preds[j];
    concordant += (t_less && p_less) || (t_more && p_more);
  }
  return static_cast<double>(concordant) / static_cast<double>(num_pairs_to_draw);
}

XAuc::XAuc(XAucOptions options) : options_(options) {
  if (!(options_.sample_ratio > 0.0 && options_.sample_ratio <= 1.0)) {
    throw ConfigError(fmt::format("metrics.xauc.sample_ratio: must be in (0, 1], got {}", options_.sample_ratio));
  }
}

void XAuc::update(const torch::Tensor& preds, const torch::Tensor& targets) {
  TORCH_CHECK(!synced_, "xauc: update() after sync(); call reset() before adding samples again");
  std::vector<float> p;
  std::vector<double> t;
  read_batch("xauc", preds, targets, &p, &t);
  if (options_.in_batch) {
    if (p.size() >= 2) batch_values_.push_back(exact_xauc(p, t));
    return;
  }
  preds_.insert(preds_.end(), p.begin(), p.end());
  targets_.insert(targets_.end(), t.begin(), t.end());
}

void XAuc::merge(const XAuc& other) {
  TORCH_CHECK(!synced_, "xauc: merge() after sync(); call reset() before adding samples again");
  TORCH_CHECK(other.options_.in_batch == options_.in_batch, "xauc: cannot merge in_batch and whole-set metrics");
  preds_.insert(preds_.end(), other.preds_.begin(), other.preds_.end());
  targets_.insert(targets_.end(), other.targets_.begin(), other.targets_.end());
  batch_values_.insert(batch_values_.end(), other.batch_values_.begin(), other.batch_values_.end());
}

double XAuc::compute() const {
  if (options_.in_batch) {
    if (batch_values_.empty()) {
      log::warning("xauc: no batch with at least 2 rows; XAUC is undefined, reporting NaN");
      return kNaN;
    }
    return std::accumulate(batch_values_.begin(), batch_values_.end(), 0.0) /
           static_cast<double>(batch_values_.size());
  }
  const uint64_t total = num_pairs(preds_.size());
  if (total == 0) {
    log::warning("xauc: {} samples, no pair to compare; XAUC is undefined, reporting NaN", preds_.size());
    return kNaN;
  }
  const uint64_t to_draw =
      options_.max_pairs > 0
          ? options_.max_pairs
          : static_cast<uint64_t>(std::floor(static_cast<long double>(total) * options_.sample_ratio));
  if (total <= options_.exact_pair_limit || to_draw == 0 || exact_is_cheaper(preds_.size(), to_draw)) {
    return exact_xauc(preds_, targets_);
  }
  PairSampler sampler(options_.seed);
  return sampled_xauc(preds_, targets_, to_draw, sampler);
}

double XAuc::compute_exact() const {
  if (options_.in_batch) {
    throw UsageError("xauc: compute_exact() needs every sample; with in_batch only per-batch values are kept");
  }
  return exact_xauc(preds_, targets_);
}

void XAuc::sync(dist::ProcessGroup& pg) {
  if (synced_) return;
  synced_ = true;
  if (pg.world_size() == 1) return;
  // One float64 row per sample (pred, target), or per batch value (value, 0) with in_batch;
  // float32 predictions are exact in float64.
  const bool in_batch = options_.in_batch;
  const int64_t n = static_cast<int64_t>(in_batch ? batch_values_.size() : preds_.size());
  torch::Tensor rows = torch::zeros({n, 2}, torch::kFloat64);
  double* r = rows.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) {
    r[2 * i] = in_batch ? batch_values_[i] : static_cast<double>(preds_[i]);
    r[2 * i + 1] = in_batch ? 0.0 : targets_[i];
  }
  const std::vector<torch::Tensor> blocks =
      detail::gather_blocks(pg, torch::zeros({1, 2}, torch::kFloat64), rows, "xauc samples");
  preds_.clear();
  targets_.clear();
  batch_values_.clear();
  for (const torch::Tensor& b : blocks) {
    const torch::Tensor block = b.contiguous();
    const double* d = block.data_ptr<double>();
    for (int64_t i = 1; i < block.size(0); ++i) {
      if (in_batch) {
        batch_values_.push_back(d[2 * i]);
      } else {
        preds_.push_back(static_cast<float>(d[2 * i]));
        targets_.push_back(d[2 * i + 1]);
      }
    }
  }
}

void XAuc::reset() {
  synced_ = false;
  preds_.clear();
  targets_.clear();
  batch_values_.clear();
}

GroupedXAuc::GroupedXAuc(uint64_t max_pairs_per_group, uint64_t seed)
    : max_pairs_per_group_(max_pairs_per_group == 0 ? 100 : max_pairs_per_group), seed_(seed) {}

void GroupedXAuc::update(const torch::Tensor& preds, const torch::Tensor& targets, const torch::Tensor& groups) {
  TORCH_CHECK(!synced_, "grouped_xauc: update() after sync(); call reset() before adding samples again");
  std::vector<float> p;
  std::vector<double> t;
  read_batch("grouped_xauc", preds, targets, &p, &t);
  if (groups.numel() != static_cast<int64_t>(p.size())) {
    throw UsageError(fmt::format("grouped_xauc: {} predictions but {} group ids", p.size(), groups.numel()));
  }
  torch::Tensor g = groups.detach().reshape({-1}).to(torch::kCPU, torch::kInt64).contiguous();
  preds_.insert(preds_.end(), p.begin(), p.end());
  targets_.insert(targets_.end(), t.begin(), t.end());
  groups_.insert(groups_.end(), g.data_ptr<int64_t>(), g.data_ptr<int64_t>() + g.numel());
}

void GroupedXAuc::merge(const GroupedXAuc& other) {
  TORCH_CHECK(!synced_, "grouped_xauc: merge() after sync(); call reset() before adding samples again");
  groups_.insert(groups_.end(), other.groups_.begin(), other.groups_.end());
  preds_.insert(preds_.end(), other.preds_.begin(), other.preds_.end());
  targets_.insert(targets_.end(), other.targets_.begin(), other.targets_.end());
}

namespace {
// Sample indices ordered by group id (stable: arrival order inside a group).
std::vector<size_t> order_by_group(const std::vector<int64_t>& groups) {
  std::vector<size_t> order(groups.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return groups[a] < groups[b]; });
  return order;
}
}  // namespace

double GroupedXAuc::compute() const {
  const std::vector<size_t> order = order_by_group(groups_);
  PairSampler sampler(seed_);
  double weighted_sum = 0.0, total_weight = 0.0;
  std::vector<float> gp;
  std::vector<double> gt;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && groups_[order[j]] == groups_[order[i]]) ++j;
    if (j - i >= 2) {
      gp.clear();
      gt.clear();
      for (size_t k = i; k < j; ++k) {
        gp.push_back(preds_[order[k]]);
        gt.push_back(targets_[order[k]]);
      }
      const double x = exact_is_cheaper(gp.size(), max_pairs_per_group_)
                           ? exact_xauc(gp, gt)
                           : sampled_xauc(gp, gt, max_pairs_per_group_, sampler);
      weighted_sum += x * static_cast<double>(gp.size());
      total_weight += static_cast<double>(gp.size());
    }
    i = j;
  }
  if (total_weight == 0.0) {
    log::warning("grouped_xauc: no group has two rows among {} samples; reporting NaN", groups_.size());
    return kNaN;
  }
  return weighted_sum / total_weight;
}

int64_t GroupedXAuc::num_valid_groups() const {
  std::vector<int64_t> g(groups_);
  std::sort(g.begin(), g.end());
  int64_t valid = 0;
  for (size_t i = 0; i < g.size();) {
    size_t j = i;
    while (j < g.size() && g[j] == g[i]) ++j;
    valid += (j - i >= 2);
    i = j;
  }
  return valid;
}

void GroupedXAuc::sync(dist::ProcessGroup& pg) {
  if (synced_) return;
  synced_ = true;
  if (pg.world_size() == 1) return;
  // Targets travel as their float64 bits: exact.
  detail::GroupedSamples samples{std::move(groups_), std::move(preds_), std::vector<int64_t>(targets_.size())};
  std::memcpy(samples.payload.data(), targets_.data(), targets_.size() * sizeof(double));
  detail::gather_grouped_samples(pg, samples, "grouped_xauc samples");
  groups_ = std::move(samples.groups);
  preds_ = std::move(samples.preds);
  targets_.assign(samples.payload.size(), 0.0);
  std::memcpy(targets_.data(), samples.payload.data(), samples.payload.size() * sizeof(double));
}

void GroupedXAuc::reset() {
  synced_ = false;
  groups_.clear();
  preds_.clear();
  targets_.clear();
}

}  // namespace tzrec::metrics
