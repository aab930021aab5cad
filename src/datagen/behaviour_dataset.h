// The synthetic behaviour data set of `tzrec gen_data --dataset behaviour`: users with click
// histories of items, for sequence models (DIN). The label of a row depends mainly on the
// attention between the target item and the user's history, so a model that reads the history
// (MultiTowerDIN) beats the same model without it by a wide margin (examples/
// multi_tower_din_behaviour.config against examples/multi_tower_behaviour.config,
// bench/compare_din_auc.sh).
//
// Columns (one row = one impression of a target item to a user):
//   label                               0/1
//   user_id   in [1, kBehaviourNumUsers]
//   item_id   in [1, kBehaviourNumItems]       the target item
//   cate_id   in [1, kBehaviourNumCategories]  its category
//   brand     in [1, kBehaviourNumBrands]      its brand
//   click_seq__item_id, click_seq__cate_id, click_seq__brand
//             the user's history, most recent first, ids joined by '|' (same item count in all
//             three; an empty string for an empty history). 0 .. kBehaviourMaxHistory items.
// Id 0 is never written: it is what feature generation substitutes for an empty history.
//
// The hidden model (per seed; constants in behaviour_dataset.cc, documented in bench/README.md):
//   - categories have popularity  pi(c) ∝ c^-0.7; brand b belongs to category 1 + (b-1) mod C;
//     items 1..B have brand = item id, the others a hashed brand; an item's category is its brand's.
//   - item popularity n_i ~ N(0, 1); within a category items are drawn ∝ exp(n_i).
//   - latent vectors: z_i = normalize(g_cate + 0.6 g_brand + 0.4 g_item), g ~ N(0, I_16):
//     items of one category are similar, of one brand more so.
//   - user u has 1..3 interest categories drawn from pi.
//   - a row: a uniform user; history length 0 with probability 0.1, else uniform in [1, 60];
//     each history item from one of the user's interests (probability 0.8) or from pi; the
//     target from one of the interests (probability 0.5) or from pi.
//   - attention A = sum_j softmax_j(5 s_j) s_j with s_j = <z_target, z_history_j> over the whole
//     history (0 for an empty one); logit = bias + 4 A + 0.3 n_target, the bias calibrated to a
//     30% positive rate; label ~ Bernoulli(sigmoid(logit)).
//
// Everything is a pure function of (seed, global row index) built from datagen/random.h (no std::
// distributions), so train and eval files use disjoint row ranges of one hidden model and the
// output is the same on every platform. No torch.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tzrec::datagen {

inline constexpr int64_t kBehaviourNumUsers = 100000;
inline constexpr int64_t kBehaviourNumItems = 50000;
inline constexpr int64_t kBehaviourNumCategories = 100;
inline constexpr int64_t kBehaviourNumBrands = 2000;
inline constexpr int kBehaviourMaxHistory = 60;
inline constexpr int kBehaviourLatentDim = 16;
// Separator of the history items in the click_seq__* cells (the configs' sequence_delim).
inline constexpr char kBehaviourSequenceDelim = '|';

struct BehaviourOptions {
  int64_t num_rows = 200000;
  uint64_t seed = 2024;
  std::string format = "csv";  // "csv" or "parquet" (used by write_behaviour_dataset)
  // CSV only.
  char delimiter = ',';
  bool with_header = true;
  // Parquet only: rows per row group (the writer holds about one row group in memory).
  int64_t row_group_rows = 65536;
};

struct BehaviourRow {
  int label = 0;
  int64_t user_id = 0;
  int64_t item_id = 0;
  int64_t cate_id = 0;
  int64_t brand = 0;
  std::vector<int64_t> history;  // item ids, most recent first
  double attention = 0.0;        // A of the hidden model
  double logit = 0.0;            // label ~ Bernoulli(sigmoid(logit))
};

class BehaviourModel {
 public:
  // Precomputes item attributes and latent vectors (~1M numbers) and calibrates the bias.
  explicit BehaviourModel(uint64_t seed);

  // Row `index` (global, 0-based); deterministic in (seed, index).
  BehaviourRow row(int64_t index) const;

  // Attributes of item ids in [1, kBehaviourNumItems] (ConfigError outside).
  int64_t item_category(int64_t item) const;
  int64_t item_brand(int64_t item) const;
  double item_popularity(int64_t item) const;  // n_i
  // The unit latent vector z_i (kBehaviourLatentDim floats).
  const float* item_latent(int64_t item) const;
  // The interest categories of user ids in [1, kBehaviourNumUsers] (1..3, may repeat).
  std::vector<int64_t> user_interests(int64_t user) const;

  // A and the logit for a target item and a history (item ids).
  double attention(int64_t target, const std::vector<int64_t>& history) const;
  double logit(int64_t target, const std::vector<int64_t>& history) const;
  double bias() const { return bias_; }
  uint64_t seed() const { return seed_; }

 private:
  void check_item(int64_t item) const;
  int64_t draw_category(double u) const;
  int64_t draw_item(int64_t category, double u) const;
  // Fills everything but label and logit; returns the logit without bias.
  double draw_row(uint64_t row_seed, BehaviourRow* row) const;

  uint64_t seed_;
  double bias_ = 0.0;
  std::vector<double> category_cdf_;                    // [C], over categories 1..C
  std::vector<int64_t> item_brand_;                     // [I + 1]
  std::vector<double> item_popularity_;                 // [I + 1]
  std::vector<float> item_latent_;                      // [(I + 1) * dim]
  std::vector<std::vector<int64_t>> category_items_;    // [C + 1]: items of a category
  std::vector<std::vector<double>> category_item_cdf_;  // [C + 1]: CDF over those items
};

// The column names in file order: label, user_id, item_id, cate_id, brand, click_seq__item_id,
// click_seq__cate_id, click_seq__brand.
const std::vector<std::string>& behaviour_columns();

// Each writer writes rows [row_offset, row_offset + num_rows) to `path`, through path + ".tmp"
// renamed when complete. IoError (naming the file) when it cannot be written; ConfigError for
// negative counts or an unusable delimiter / row group size.

// CSV: optional header line, one line per row, '\n' line ends; the history cells hold the ids
// joined by '|' (no quoting is needed: no cell contains the delimiter).
void write_behaviour_csv(const std::string& path, const BehaviourOptions& options, int64_t row_offset = 0);

// Parquet (SNAPPY, dictionary encoding, row groups of options.row_group_rows rows), all columns
// REQUIRED: label and the target ids INT64, the click_seq__* columns STRING holding the same
// '|'-joined text as the CSV cells.
void write_behaviour_parquet(const std::string& path, const BehaviourOptions& options, int64_t row_offset = 0);

// Dispatches on options.format ("csv" or "parquet"); NotSupportedError for any other format.
void write_behaviour_dataset(const std::string& path, const BehaviourOptions& options, int64_t row_offset = 0);

}  // namespace tzrec::datagen
