#include "datagen/interaction_model.h"

#include <algorithm>
#include <cmath>

#include "datagen/value_generator.h"

namespace tzrec::datagen {

namespace {

constexpr uint64_t kSaltModelTopic = 0x17e4ac7100000001ULL;
constexpr uint64_t kSaltModelItem = 0x17e4ac7100000002ULL;
constexpr uint64_t kSaltModelUser = 0x17e4ac7100000003ULL;
constexpr uint64_t kSaltModelCalibration = 0x17e4ac7100000004ULL;

constexpr double kItemNoise = 0.35;
constexpr double kTopicSkew = 0.5;
constexpr double kAffinityWeight = 2.0;
constexpr double kQualityWeight = 0.6;
constexpr double kPropensityWeight = 0.5;
constexpr double kEngagementWeight = 0.8;
constexpr double kRecentDecay = 16.0;
constexpr int kCalibrationSamples = 4000;
constexpr int kRecentCalibrationSamples = 1000;
// Request end times: KuaiRand's span, 2022-04-08 .. 2022-05-08 UTC.
constexpr int64_t kFirstEnd = 1649376000;
constexpr int64_t kLastEnd = 1651968000;

double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

LatentVector unit_vector(const LatentVector& v) {
  double n = 0.0;
  for (double x : v) n += x * x;
  n = std::sqrt(n);
  LatentVector out = v;
  if (n > 0.0) {
    for (double& x : out) x /= n;
  }
  return out;
}

double dot(const LatentVector& a, const LatentVector& b) {
  double v = 0.0;
  for (int d = 0; d < kLatentDim; ++d) v += a[d] * b[d];
  return v;
}

// The target rate of action k.
double target_action_rate(size_t k) { return std::max(0.04, 0.35 * std::pow(0.6, static_cast<double>(k))); }

// Mean and 1 / deviation of `values`.
void standardize_samples(const std::vector<double>& values, double* mean, double* scale) {
  double sum = 0.0;
  double sum2 = 0.0;
  for (double v : values) {
    sum += v;
    sum2 += v * v;
  }
  const double n = static_cast<double>(std::max<size_t>(values.size(), 1));
  *mean = sum / n;
  const double var = std::max(sum2 / n - *mean * *mean, 0.0);
  *scale = var > 1e-12 ? 1.0 / std::sqrt(var) : 1.0;
}

}  // namespace

InteractionModel::InteractionModel(int64_t num_items, std::vector<uint64_t> actions, uint64_t seed)
    : seed_(seed), actions_(std::move(actions)) {
  if (actions_.empty()) actions_.push_back(1);
  num_items = std::max<int64_t>(num_items, 1);
  topic_vector_.resize(kTopics);
  topic_items_.resize(kTopics);
  double total = 0.0;
  for (int t = 0; t < kTopics; ++t) {
    for (int d = 0; d < kLatentDim; ++d) topic_vector_[t][d] = normal_from(mix(seed, kSaltModelTopic, t, d));
    total += std::pow(t + 1.0, -kTopicSkew);
    topic_cdf_.push_back(total);
  }
  for (double& c : topic_cdf_) c /= total;
  topic_.resize(static_cast<size_t>(num_items));
  vector_.resize(static_cast<size_t>(num_items));
  quality_.resize(static_cast<size_t>(num_items));
  duration_.resize(static_cast<size_t>(num_items));
  for (int64_t i = 0; i < num_items; ++i) {
    Rng rng(mix(seed, kSaltModelItem, static_cast<uint64_t>(i)));
    const int t = static_cast<int>(rng.next() % kTopics);
    topic_[static_cast<size_t>(i)] = t;
    topic_items_[static_cast<size_t>(t)].push_back(i);
    LatentVector v;
    for (int d = 0; d < kLatentDim; ++d) v[d] = topic_vector_[t][d] + kItemNoise * rng.normal();
    vector_[static_cast<size_t>(i)] = unit_vector(v);
    quality_[static_cast<size_t>(i)] = rng.normal();
    duration_[static_cast<size_t>(i)] = std::clamp(std::exp(std::log(25.0) + 0.7 * rng.normal()), 3.0, 600.0);
  }
  calibrate(seed);
}

UserProfile InteractionModel::user(int64_t index, double propensity) const {
  UserProfile u;
  u.index = index;
  u.propensity = propensity;
  Rng rng(mix(seed_, kSaltModelUser, static_cast<uint64_t>(index)));
  const int n = static_cast<int>(rng.uniform_int(1, 3));
  double total = 0.0;
  for (int k = 0; k < n; ++k) {
    const double x = rng.unit();
    const int t = static_cast<int>(std::lower_bound(topic_cdf_.begin(), topic_cdf_.end(), x) - topic_cdf_.begin());
    u.topics.push_back(std::min(t, kTopics - 1));
    u.weights.push_back(-std::log(rng.unit()));
    total += u.weights.back();
  }
  LatentVector taste{};
  for (size_t k = 0; k < u.topics.size(); ++k) {
    u.weights[k] /= total;
    for (int d = 0; d < kLatentDim; ++d) taste[d] += u.weights[k] * topic_vector_[static_cast<size_t>(u.topics[k])][d];
  }
  u.taste = unit_vector(taste);
  return u;
}

int64_t InteractionModel::draw_item(const UserProfile& user, double interest, Rng& rng) const {
  const double pick = rng.unit();
  const double u = rng.unit();
  if (pick < interest && !user.topics.empty()) {
    double x = rng.unit();
    size_t k = 0;
    while (k + 1 < user.weights.size() && x >= user.weights[k]) x -= user.weights[k++];
    const auto& items = topic_items_[static_cast<size_t>(user.topics[k])];
    if (!items.empty()) return items[static_cast<size_t>(zipf_rank(static_cast<int64_t>(items.size()), u))];
  }
  return zipf_rank(num_items(), u);
}

double InteractionModel::taste_affinity(const UserProfile& user, int64_t item) const {
  return (dot(vector(item), user.taste) - taste_mean_) * taste_scale_;
}

double InteractionModel::raw_recent_affinity(const std::vector<Interaction>& history, int64_t item) const {
  const LatentVector& z = vector(item);
  double sum = 0.0;
  double weights = 0.0;
  const size_t n = history.size();
  for (size_t age = 0; age < n && age < static_cast<size_t>(kRecentWindow); ++age) {
    const Interaction& e = history[n - 1 - age];
    const double w = std::exp(-static_cast<double>(age) / kRecentDecay) * (e.action != 0 ? 2.0 : 1.0);
    sum += w * dot(z, vector(e.item));
    weights += w;
  }
  return weights > 0.0 ? sum / weights : 0.0;
}

double InteractionModel::recent_affinity(const std::vector<Interaction>& history, int64_t item) const {
  return (raw_recent_affinity(history, item) - recent_mean_) * recent_scale_;
}

void InteractionModel::respond(const UserProfile& user, int64_t item, double affinity, Rng& rng,
                               Interaction* out) const {
  const double q = quality(item);
  const double e = rng.normal();
  const double s = kAffinityWeight * affinity + kQualityWeight * q + kPropensityWeight * user.propensity +
                   kEngagementWeight * e;
  out->item = item;
  out->action = 0;
  for (size_t k = 0; k < actions_.size(); ++k) {
    if (rng.unit() < logistic(bias_[k] + s)) out->action |= actions_[k];
  }
  const double fraction = logistic(-0.3 + 0.8 * affinity + 0.4 * q + 0.6 * e + 0.5 * rng.normal());
  out->watch_time = std::llround(duration(item) * fraction * (out->action != 0 ? 1.3 : 0.7));
}

int64_t InteractionModel::end_time(Rng& rng) { return rng.uniform_int(kFirstEnd, kLastEnd); }

int64_t InteractionModel::gap_after(int64_t watch_time, Rng& rng) {
  if (rng.unit() < 0.1) {
    // A session break: 10 minutes to 7 days, log-uniform.
    const double lo = std::log(600.0);
    const double hi = std::log(7.0 * 86400.0);
    return std::llround(std::exp(lo + (hi - lo) * rng.unit()));
  }
  return std::max<int64_t>(watch_time, 0) + rng.uniform_int(1, 20);
}

void InteractionModel::calibrate(uint64_t seed) {
  Rng rng(mix(seed, kSaltModelCalibration));
  // The taste affinity of history events, then the action biases on their scores.
  std::vector<double> raw;
  std::vector<UserProfile> users;
  std::vector<int64_t> items;
  for (int i = 0; i < kCalibrationSamples; ++i) {
    users.push_back(user(static_cast<int64_t>(rng.next() >> 1), rng.normal()));
    items.push_back(draw_item(users.back(), kHistoryInterest, rng));
    raw.push_back(dot(vector(items.back()), users.back().taste));
  }
  standardize_samples(raw, &taste_mean_, &taste_scale_);
  std::vector<double> scores;
  for (int i = 0; i < kCalibrationSamples; ++i) {
    scores.push_back(kAffinityWeight * taste_affinity(users[i], items[i]) + kQualityWeight * quality(items[i]) +
                     kPropensityWeight * users[i].propensity + kEngagementWeight * rng.normal());
  }
  bias_.assign(actions_.size(), 0.0);
  for (size_t k = 0; k < actions_.size(); ++k) {
    // The mean of logistic(b + s) increases with b: bisection to the target rate.
    double lo = -30.0;
    double hi = 30.0;
    for (int it = 0; it < 60; ++it) {
      const double mid = 0.5 * (lo + hi);
      double mean = 0.0;
      for (double s : scores) mean += logistic(mid + s);
      mean /= static_cast<double>(scores.size());
      (mean < target_action_rate(k) ? lo : hi) = mid;
    }
    bias_[k] = 0.5 * (lo + hi);
  }
  // The recent affinity of candidates after histories of 1..kRecentWindow events.
  raw.clear();
  std::vector<Interaction> history;
  for (int i = 0; i < kRecentCalibrationSamples; ++i) {
    const UserProfile u = user(static_cast<int64_t>(rng.next() >> 1), rng.normal());
    const int n = static_cast<int>(std::floor(std::exp(rng.unit() * std::log(kRecentWindow + 1.0))));
    history.assign(static_cast<size_t>(std::clamp(n, 1, kRecentWindow)), Interaction{});
    for (auto& e : history) {
      const int64_t item = draw_item(u, kHistoryInterest, rng);
      respond(u, item, taste_affinity(u, item), rng, &e);
    }
    raw.push_back(raw_recent_affinity(history, draw_item(u, kCandidateInterest, rng)));
  }
  standardize_samples(raw, &recent_mean_, &recent_scale_);
}

}  // namespace tzrec::datagen
