// Criteo-shaped synthetic click data with labels drawn from a hidden logistic model, so that
// trained models reach a meaningful AUC (used by `tzrec gen_data`, examples and benchmarks).
//
// Columns: label (0/1), int_0..int_12 (small non-negative counts), cat_0..cat_25 (integer ids
// in [0, num_buckets) as in examples/deepfm_criteo_synth.config; or, with string_categoricals,
// 8-hex-digit strings like real Criteo's hashed values, see synthetic_criteo_cat_string).
//
// Output formats: CSV (write_synthetic_criteo_csv) and Parquet (write_synthetic_criteo_parquet);
// write_synthetic_criteo picks one by options.format.
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
  std::string format = "csv";  // "csv" or "parquet" (used by write_synthetic_criteo)
  // cat_* as strings (synthetic_criteo_cat_string) instead of integer ids: Parquet STRING
  // columns, or the strings as CSV cells. The ids, and so the rows, are unchanged.
  bool string_categoricals = false;
  // CSV only.
  char delimiter = ',';
  bool with_header = true;
  // Parquet only: rows per row group (the writer holds about one row group in memory).
  int64_t row_group_rows = 65536;
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

// The string form of id `id` of categorical feature `feature` (cat_<feature>):
//   x = (feature + 1) * 65536 + id                      (ids are < 65536 for every feature)
//   h = fmix32(x)  (MurmurHash3's finalizer on uint32:  h ^= h >> 16; h *= 0x85ebca6b;
//                   h ^= h >> 13; h *= 0xc2b2ae35; h ^= h >> 16)
//   the 8 lowercase hex digits of h, zero-padded ("%08x").
// fmix32 is a bijection on uint32, so distinct (feature, id) pairs give distinct strings.
// Example: (0, 0) -> "0ea34562", (0, 1) -> "da78cb40". Not seed dependent.
// Throws ConfigError for a feature outside [0, 26) or an id outside [0, num_buckets).
std::string synthetic_criteo_cat_string(int feature, int64_t id);

// Each writer below writes rows [row_offset, row_offset + num_rows) to `path`, through
// path + ".tmp" renamed to `path` when complete. They ignore options.format.
// Throws IoError (naming the file) when the file cannot be written, ConfigError for
// num_rows < 0 / row_offset < 0 or invalid format-specific options.

// CSV: optional header line (synthetic_criteo_header), one line per row, '\n' line ends.
void write_synthetic_criteo_csv(const std::string& path, const SyntheticCriteoOptions& options,
                                int64_t row_offset = 0);

// Parquet (SNAPPY, dictionary encoding, row groups of options.row_group_rows rows), all columns
// REQUIRED: label and int_* INT64; cat_* INT64 ids, or STRING when string_categoricals.
// Streams: memory is bounded by about one row group, whatever num_rows.
void write_synthetic_criteo_parquet(const std::string& path, const SyntheticCriteoOptions& options,
                                    int64_t row_offset = 0);

// Dispatches on options.format ("csv" or "parquet"); NotSupportedError for any other format.
void write_synthetic_criteo(const std::string& path, const SyntheticCriteoOptions& options,
                            int64_t row_offset = 0);

}  // namespace tzrec::data
