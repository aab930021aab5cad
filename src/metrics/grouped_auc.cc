#include "metrics/grouped_auc.h"

#include <algorithm>
#include <cstring>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <utility>

#include "base/error.h"
#include "base/logging.h"
#include "metrics/metric_sync.h"

namespace tzrec::metrics {

double exact_binary_auc(std::vector<std::pair<float, uint8_t>> samples) {
  // Sort by prediction; within a block of equal predictions each (neg, pos) pair counts 1/2.
  std::sort(samples.begin(), samples.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  double num_pos = 0, num_neg = 0, pairs = 0;
  for (size_t i = 0; i < samples.size();) {
    size_t j = i;
    double pos = 0, neg = 0;
    while (j < samples.size() && samples[j].first == samples[i].first) {
      (samples[j].second ? pos : neg) += 1;
      ++j;
    }
    pairs += pos * num_neg + 0.5 * pos * neg;  // positives above every earlier negative
    num_pos += pos;
    num_neg += neg;
    i = j;
  }
  if (num_pos == 0 || num_neg == 0) return std::numeric_limits<double>::quiet_NaN();
  return pairs / (num_pos * num_neg);
}

void GroupedAuc::update(const torch::Tensor& preds, const torch::Tensor& labels, const torch::Tensor& groups) {
  TORCH_CHECK(!synced_, "grouped_auc: update() after sync(); call reset() before adding samples again");
  TORCH_CHECK(preds.sizes() == labels.sizes() && preds.sizes() == groups.sizes(), "grouped_auc: preds ",
              preds.sizes(), ", labels ", labels.sizes(), " and groups ", groups.sizes(), " must match");
  torch::Tensor p = preds.detach().to(torch::kCPU, torch::kFloat32).reshape({-1}).contiguous();
  torch::Tensor y = labels.detach().to(torch::kCPU, torch::kFloat64).reshape({-1}).contiguous();
  torch::Tensor g = groups.detach().to(torch::kCPU, torch::kInt64).reshape({-1}).contiguous();
  if (torch::isnan(p).any().item<bool>()) throw DataError("grouped_auc: predictions contain NaN");
  if (!((y == 0) | (y == 1)).all().item<bool>()) throw DataError("grouped_auc: labels must be 0 or 1");
  const int64_t n = p.numel();
  const float* pp = p.data_ptr<float>();
  const double* yp = y.data_ptr<double>();
  const int64_t* gp = g.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    preds_.push_back(pp[i]);
    labels_.push_back(yp[i] != 0 ? 1 : 0);
    groups_.push_back(gp[i]);
  }
}

void GroupedAuc::merge(const GroupedAuc& other) {
  TORCH_CHECK(!synced_, "grouped_auc: merge() after sync(); call reset() before adding samples again");
  groups_.insert(groups_.end(), other.groups_.begin(), other.groups_.end());
  preds_.insert(preds_.end(), other.preds_.begin(), other.preds_.end());
  labels_.insert(labels_.end(), other.labels_.begin(), other.labels_.end());
}

void GroupedAuc::sync(dist::ProcessGroup& pg) {
  if (synced_) return;
  synced_ = true;
  if (pg.world_size() == 1) return;
  detail::GroupedSamples samples{std::move(groups_), std::move(preds_),
                                 std::vector<int64_t>(labels_.begin(), labels_.end())};
  detail::gather_grouped_samples(pg, samples, "grouped_auc samples");
  groups_ = std::move(samples.groups);
  preds_ = std::move(samples.preds);
  labels_.clear();
  for (int64_t label : samples.payload) labels_.push_back(label != 0 ? 1 : 0);
}

namespace {

// group id → AUC of the groups having both labels.
std::vector<double> group_aucs(const std::vector<int64_t>& groups, const std::vector<float>& preds,
                               const std::vector<uint8_t>& labels) {
  std::unordered_map<int64_t, std::vector<std::pair<float, uint8_t>>> by_group;
  for (size_t i = 0; i < groups.size(); ++i) by_group[groups[i]].emplace_back(preds[i], labels[i]);
  std::vector<double> out;
  for (auto& entry : by_group) {
    const double auc = exact_binary_auc(std::move(entry.second));
    if (!std::isnan(auc)) out.push_back(auc);
  }
  return out;
}

}  // namespace

double GroupedAuc::compute() const {
  const std::vector<double> aucs = group_aucs(groups_, preds_, labels_);
  if (aucs.empty()) {
    log::warning("grouped_auc: no group has both positive and negative samples; reporting 0");
    return 0.0;
  }
  double sum = 0;
  for (double a : aucs) sum += a;
  return sum / static_cast<double>(aucs.size());
}

int64_t GroupedAuc::num_valid_groups() const {
  return static_cast<int64_t>(group_aucs(groups_, preds_, labels_).size());
}

void GroupedAuc::reset() {
  synced_ = false;
  groups_.clear();
  preds_.clear();
  labels_.clear();
}

}  // namespace tzrec::metrics
