// Criteo-shaped synthetic click data with labels drawn from a hidden logistic model, so that
// trained models reach a meaningful AUC (used by `tzrec gen_data`, examples and benchmarks).
//
// Columns: label (0/1), int_0..int_12 (small non-negative counts), cat_0..cat_25 (integer ids
// in [0, num_buckets) as in examples/deepfm_criteo_synth.config).
//
// Everything is a pure function of (seed, global row index): row i is drawn from its own
// mt19937_64 stream, so train and eval files can use disjoint row ranges of the same hidden model
// and the output is byte-identical across platforms and standard libraries (no std::
// distributions are used; uniform / normal / Zipf sampling is implemented here).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tzrec::data {

inline constexpr int kSynthNumInt = 13;
inline constexpr int kSynthNumCat = 26;

// num_buckets of cat_0..cat_25; must equal examples/deepfm_criteo_synth.config.
const std::array<int64_t, kSynthNumCat>& synthetic_criteo_bucket_sizes();

struct SyntheticCriteoOptions {
  int64_t num_rows = 200000;
  uint64_t seed = 2024;
  std::string format = "csv";  // only "csv" is implemented
  char delimiter = ',';
  bool with_header = true;
};

struct SyntheticCriteoRow {
  int label = 0;
  std::array<int64_t, kSynthNumInt> ints{};
  std::array<int64_t, kSynthNumCat> cats{};
  double logit = 0.0;  // oracle logit of the hidden model (label ~ Bernoulli(sigmoid(logit)))
};

// The hidden model for one seed. Construction precomputes per-(feature, id) weights and Zipf
// tables (~250k entries) and calibrates the bias to a ~25% positive rate.
class SyntheticCriteoModel {
 public:
  explicit SyntheticCriteoModel(uint64_t seed);

  // Row `index` (global, 0-based) of the data set; deterministic in (seed, index).
  SyntheticCriteoRow row(int64_t index) const;
  // Oracle logit of the hidden model for given feature values (ids must be in range).
  double logit(const std::array<int64_t, kSynthNumInt>& ints,
               const std::array<int64_t, kSynthNumCat>& cats) const;
  double bias() const { return bias_; }
  uint64_t seed() const { return seed_; }

 private:
  // Features only (no label); returns the logit without bias.
  double draw_features(uint64_t row_seed, SyntheticCriteoRow* row) const;
  double logit_without_bias(const std::array<int64_t, kSynthNumInt>& ints,
                            const std::array<int64_t, kSynthNumCat>& cats) const;

  uint64_t seed_;
  double bias_ = 0.0;
  std::array<std::vector<double>, kSynthNumCat> cat_cdf_;    // Zipf CDF over ids
  std::array<std::vector<float>, kSynthNumCat> cat_weight_;  // first-order weight per id
  std::array<std::vector<float>, kSynthNumCat> cat_factor_;  // interaction factor per id
  std::array<double, kSynthNumInt> int_mu_{};                // log-normal location
  std::array<double, kSynthNumInt> int_sigma_{};             // log-normal scale
  std::array<double, kSynthNumInt> int_weight_{};            // weight on standardized log1p(x)
};

// Header line (without newline): label,int_0..int_12,cat_0..cat_25 joined by `delimiter`.
std::string synthetic_criteo_header(char delimiter);

// Writes rows [row_offset, row_offset + num_rows) to `path` (via path + ".tmp", then rename).
// Throws IoError when the file cannot be written, NotSupportedError for a format other than csv,
// ConfigError for num_rows < 0 / row_offset < 0.
void write_synthetic_criteo_csv(const std::string& path, const SyntheticCriteoOptions& options,
                                int64_t row_offset = 0);

}  // namespace tzrec::data
