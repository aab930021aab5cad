// The hidden model of users, items and their interactions behind the data gen_data writes for
// generative-recommendation configs (generative_rows.h): short-video sessions shaped like
// KuaiRand's. Items and users are pure functions of the seed, responses of the caller's stream
// (datagen/random.h).
//
// Items 0..num_items-1, the index being the popularity rank. Item i belongs to one of kTopics
// topics (hashed), has the latent vector z_i = normalize(g_topic + 0.35 h_i) in R^kLatentDim
// (g, h ~ N(0, I)), a quality q_i ~ N(0, 1) and a duration d_i = clamp(exp(N(ln 25, 0.7)), 3, 600)
// seconds.
// Users: 1..3 interest topics (topic t drawn with probability ∝ (t + 1)^-0.5) with weights
// ~ Exp(1), the taste m_u = normalize(Σ_t w_t g_t), and a propensity p_u given by the caller
// (gen_data derives it from the user's contextual features).
// Items shown to a user: with probability `interest` from one of the interests (topic by weight,
// then Zipf over the topic's items), else Zipf over all items.
// The response to item i at standardized affinity a:
//   e ~ N(0, 1) (engagement noise), s = 2 a + 0.6 q_i + 0.5 p_u + 0.8 e;
//   action k (actions in ascending order) is taken with probability sigmoid(b_k + s), b_k
//   calibrated so that its rate over history events is max(0.04, 0.35 * 0.6^k); the action
//   bitmask is the OR of the actions taken;
//   watch time = round(d_i * sigmoid(-0.3 + 0.8 a + 0.4 q_i + 0.6 e + 0.5 n) * (1.3 when an action
//   was taken, else 0.7)) seconds, n ~ N(0, 1).
// Affinities, each standardized by its mean and deviation on calibration samples (seeded):
//   taste   <z_i, m_u>, for the events of a history (calibrated on history events);
//   recent  Σ_j ω_j <z_c, z_j> / Σ_j ω_j over the last kRecentWindow events j of the observed
//           history, ω_j = exp(-age_j / 16) (age 0: the newest), doubled when the event has an
//           action; for the candidates, so that their labels follow what the history shows
//           (calibrated on impressions after histories of 1..kRecentWindow events).
// Times: a request ends at a Unix time uniform in KuaiRand's span (2022-04-08 .. 2022-05-08 UTC);
// consecutive events of a session are the earlier event's watch time plus 1..20 s apart, and
// with probability 0.1 a session break of 10 minutes to 7 days (log-uniform) separates them.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "datagen/random.h"

namespace tzrec::datagen {

inline constexpr int kLatentDim = 8;
inline constexpr int kTopics = 32;
inline constexpr int kRecentWindow = 64;
// The `interest` of the items of a history, of candidates shown to a user (impressions) and of the
// items a user engages with next (a retrieval model's positives).
inline constexpr double kHistoryInterest = 0.8;
inline constexpr double kCandidateInterest = 0.5;
inline constexpr double kPositiveInterest = 0.8;
using LatentVector = std::array<double, kLatentDim>;

struct UserProfile {
  int64_t index = 0;
  std::vector<int> topics;
  std::vector<double> weights;  // of the topics, summing to 1
  LatentVector taste{};
  double propensity = 0.0;
};

// One event of a history, or one candidate.
struct Interaction {
  int64_t item = 0;
  uint64_t action = 0;     // bitmask
  int64_t watch_time = 0;  // seconds
  int64_t time = 0;        // Unix seconds
};

class InteractionModel {
 public:
  // `actions`: the action bitmasks (generative_layout.h), ascending, not empty.
  InteractionModel(int64_t num_items, std::vector<uint64_t> actions, uint64_t seed);

  int64_t num_items() const { return static_cast<int64_t>(topic_.size()); }
  const std::vector<uint64_t>& actions() const { return actions_; }

  UserProfile user(int64_t index, double propensity) const;
  int64_t draw_item(const UserProfile& user, double interest, Rng& rng) const;

  // Standardized affinities (see above). `history` is chronological (oldest first).
  double taste_affinity(const UserProfile& user, int64_t item) const;
  double recent_affinity(const std::vector<Interaction>& history, int64_t item) const;

  // Draws the user's response to `item` at standardized affinity `affinity`: out->action and
  // out->watch_time (out->item is set to `item`, out->time left as is).
  void respond(const UserProfile& user, int64_t item, double affinity, Rng& rng, Interaction* out) const;

  int topic(int64_t item) const { return topic_[static_cast<size_t>(item)]; }
  double quality(int64_t item) const { return quality_[static_cast<size_t>(item)]; }
  double duration(int64_t item) const { return duration_[static_cast<size_t>(item)]; }
  const LatentVector& vector(int64_t item) const { return vector_[static_cast<size_t>(item)]; }

  // The time a request ends; the gap between an event with watch time `watch_time` and the next.
  static int64_t end_time(Rng& rng);
  static int64_t gap_after(int64_t watch_time, Rng& rng);

 private:
  double raw_recent_affinity(const std::vector<Interaction>& history, int64_t item) const;
  void calibrate(uint64_t seed);

  uint64_t seed_;
  std::vector<uint64_t> actions_;
  std::vector<LatentVector> topic_vector_;
  std::vector<double> topic_cdf_;  // cumulative interest-topic probabilities
  std::vector<std::vector<int64_t>> topic_items_;
  std::vector<int> topic_;
  std::vector<LatentVector> vector_;
  std::vector<double> quality_;
  std::vector<double> duration_;
  std::vector<double> bias_;  // per action
  double taste_mean_ = 0.0;
  double taste_scale_ = 1.0;
  double recent_mean_ = 0.0;
  double recent_scale_ = 1.0;
};

}  // namespace tzrec::datagen
