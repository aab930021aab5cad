#include "data/synthetic_criteo.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "base/error.h"
#include "base/stable_hash.h"
#include "base/text.h"
#include "data/file_output.h"
#include "parquet/writer.h"

namespace tzrec::data {
namespace {

constexpr std::array<int64_t, kSynthNumCat> kBucketSizes = {
    1000, 500,   20000, 10000, 200,   50,   8000,  300, 100, 30000, 5000, 40000, 2000,
    150,  15000, 600,   30,    12000, 1500, 25000, 40,  700, 18000, 80,   3000,  9000};

// Std-dev of the first-order weight of each categorical feature. Fixed (not seed dependent) so
// that every seed gives the same difficulty; a few features carry little signal, as in real data.
constexpr std::array<double, kSynthNumCat> kCatWeightScale = {
    0.55, 0.45, 0.35, 0.40, 0.50, 0.60, 0.30, 0.45, 0.50, 0.25, 0.35, 0.20, 0.40,
    0.50, 0.30, 0.45, 0.60, 0.30, 0.40, 0.20, 0.55, 0.45, 0.25, 0.50, 0.35, 0.10};

// Zipf exponent of the id distribution of every categorical feature (p(rank k) ∝ (k+1)^-s).
constexpr double kZipfExponent = 1.1;

// Overall strength of the hidden signal (tuned: DeepFM, 1 epoch on 200k rows, eval AUC ~0.786 for
// seed 2024, ~0.77 for other seeds; oracle ~0.83).
constexpr double kSignalScale = 0.65;

// Pairwise interaction terms gamma * u_a(id_a) * u_b(id_b): rank-1 in the ids, which an FM can
// represent exactly; placed on low-cardinality features so that 1 epoch can learn them.
struct Interaction {
  int a;
  int b;
  double gamma;
};
constexpr std::array<Interaction, 2> kInteractions = {{{5, 16, 0.6}, {8, 20, 0.5}}};

constexpr double kTargetPositiveRate = 0.25;
constexpr int64_t kCalibrationRows = 20000;
constexpr int64_t kMaxIntValue = 100;

// Salts that separate the independent hash streams derived from one seed.
constexpr uint64_t kSaltRow = 0x5a17c0ffee000001ULL;
constexpr uint64_t kSaltCalibration = 0x5a17c0ffee000002ULL;
constexpr uint64_t kSaltCatWeight = 0x5a17c0ffee000003ULL;
constexpr uint64_t kSaltCatFactor = 0x5a17c0ffee000004ULL;
constexpr uint64_t kSaltInt = 0x5a17c0ffee000005ULL;

uint64_t mix(uint64_t seed, uint64_t salt, uint64_t a, uint64_t b = 0) {
  return chain_seed(seed, {salt, a, b});
}

// Box-Muller from two uniform words (one of the pair is discarded: simplicity over speed).
double normal_from(uint64_t bits1, uint64_t bits2) {
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  return std::sqrt(-2.0 * std::log(open_unit_from_bits(bits1))) * std::cos(kTwoPi * open_unit_from_bits(bits2));
}

// Hash-based standard normal for (seed, salt, a, b): a fixed "random" weight per id.
double hash_normal(uint64_t seed, uint64_t salt, uint64_t a, uint64_t b) {
  uint64_t h = mix(seed, salt, a, b);
  return normal_from(h, splitmix64(h));
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

const std::array<int64_t, kSynthNumCat>& synthetic_criteo_bucket_sizes() { return kBucketSizes; }

SyntheticCriteoModel::SyntheticCriteoModel(uint64_t seed) : seed_(seed) {
  for (int f = 0; f < kSynthNumCat; ++f) {
    const int64_t n = kBucketSizes[f];
    // Zipf CDF over ranks; rank k maps to id k (ids carry no order meaning for embeddings).
    auto& cdf = cat_cdf_[f];
    cdf.resize(n);
    double total = 0.0;
    for (int64_t k = 0; k < n; ++k) {
      total += std::pow(static_cast<double>(k + 1), -kZipfExponent);
      cdf[k] = total;
    }
    for (auto& c : cdf) c /= total;
    cdf[n - 1] = 1.0;
    auto& w = cat_weight_[f];
    w.resize(n);
    for (int64_t k = 0; k < n; ++k) {
      w[k] = static_cast<float>(kSignalScale * kCatWeightScale[f] *
                                hash_normal(seed, kSaltCatWeight, f, k));
    }
  }
  for (const auto& inter : kInteractions) {
    for (int f : {inter.a, inter.b}) {
      auto& u = cat_factor_[f];
      u.resize(kBucketSizes[f]);
      for (int64_t k = 0; k < kBucketSizes[f]; ++k) {
        u[k] = static_cast<float>(hash_normal(seed, kSaltCatFactor, f, k));
      }
    }
  }
  for (int j = 0; j < kSynthNumInt; ++j) {
    const uint64_t h = mix(seed, kSaltInt, j);
    int_mu_[j] = -0.5 + 3.0 * open_unit_from_bits(h);                // median count e^mu in ~[0.6, 12]
    int_sigma_[j] = 0.7 + 0.6 * open_unit_from_bits(splitmix64(h));  // heavy right tail
    int_weight_[j] = (j % 2 == 0 ? 1.0 : -1.0) * (0.15 + 0.2 * open_unit_from_bits(splitmix64(h + 1)));
  }

  // Calibrate the bias on rows from a separate stream so that mean(sigmoid(logit)) is the target
  // positive rate. mean(sigmoid(.+b)) is increasing in b, so bisection converges.
  std::vector<double> logits(kCalibrationRows);
  SyntheticCriteoRow row;
  for (int64_t i = 0; i < kCalibrationRows; ++i) {
    logits[i] = draw_features(mix(seed, kSaltCalibration, static_cast<uint64_t>(i)), &row);
  }
  double lo = -20.0;
  double hi = 20.0;
  for (int it = 0; it < 60; ++it) {
    const double mid = 0.5 * (lo + hi);
    double mean = 0.0;
    for (double l : logits) mean += sigmoid(l + mid);
    mean /= static_cast<double>(kCalibrationRows);
    (mean < kTargetPositiveRate ? lo : hi) = mid;
  }
  bias_ = 0.5 * (lo + hi);
}

double SyntheticCriteoModel::logit_without_bias(
    const std::array<int64_t, kSynthNumInt>& ints,
    const std::array<int64_t, kSynthNumCat>& cats) const {
  double logit = 0.0;
  for (int f = 0; f < kSynthNumCat; ++f) logit += cat_weight_[f][cats[f]];
  for (const auto& inter : kInteractions) {
    logit += kSignalScale * inter.gamma * cat_factor_[inter.a][cats[inter.a]] *
             cat_factor_[inter.b][cats[inter.b]];
  }
  for (int j = 0; j < kSynthNumInt; ++j) {
    // log1p(x) standardized with the generating log-normal's parameters (approximately: the
    // floor and cap shift it a little, which only changes the bias).
    const double z = (std::log1p(static_cast<double>(ints[j])) - int_mu_[j]) / int_sigma_[j];
    logit += kSignalScale * int_weight_[j] * z;
  }
  return logit;
}

double SyntheticCriteoModel::draw_features(uint64_t row_seed, SyntheticCriteoRow* row) const {
  std::mt19937_64 rng(row_seed);
  for (int j = 0; j < kSynthNumInt; ++j) {
    const uint64_t b1 = rng();
    const uint64_t b2 = rng();
    const double v = std::floor(std::exp(int_mu_[j] + int_sigma_[j] * normal_from(b1, b2)));
    row->ints[j] = std::min<int64_t>(static_cast<int64_t>(std::min(v, 1e9)), kMaxIntValue);
  }
  for (int f = 0; f < kSynthNumCat; ++f) {
    const auto& cdf = cat_cdf_[f];
    const double u = open_unit_from_bits(rng());
    row->cats[f] = static_cast<int64_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
  }
  return logit_without_bias(row->ints, row->cats);
}

double SyntheticCriteoModel::logit(const std::array<int64_t, kSynthNumInt>& ints,
                                   const std::array<int64_t, kSynthNumCat>& cats) const {
  return bias_ + logit_without_bias(ints, cats);
}

SyntheticCriteoRow SyntheticCriteoModel::row(int64_t index) const {
  SyntheticCriteoRow r;
  const uint64_t row_seed = mix(seed_, kSaltRow, static_cast<uint64_t>(index));
  r.logit = bias_ + draw_features(row_seed, &r);
  // The label uses its own word of the row's hash so that it is independent of the features.
  r.label = open_unit_from_bits(splitmix64(row_seed ^ 0x1abe1ULL)) < sigmoid(r.logit) ? 1 : 0;
  return r;
}

std::string synthetic_criteo_header(char delimiter) {
  std::string h = "label";
  for (int j = 0; j < kSynthNumInt; ++j) h += delimiter + ("int_" + std::to_string(j));
  for (int f = 0; f < kSynthNumCat; ++f) h += delimiter + ("cat_" + std::to_string(f));
  return h;
}

namespace {

// Ids of every feature fit in 16 bits, which makes the string mapping injective.
constexpr int64_t kCatStringIdLimit = 65536;
constexpr bool ids_fit_in_16_bits() {
  for (int64_t n : kBucketSizes) {
    if (n > kCatStringIdLimit) return false;
  }
  return true;
}
static_assert(ids_fit_in_16_bits(), "the string form of cat ids assumes ids < 65536");

uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bU;
  h ^= h >> 13;
  h *= 0xc2b2ae35U;
  h ^= h >> 16;
  return h;
}

// synthetic_criteo_cat_string without the range check: writes 8 hex digits to out[0..8).
void cat_hex(int feature, int64_t id, char* out) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const uint32_t h = fmix32(static_cast<uint32_t>((feature + 1) * kCatStringIdLimit + id));
  for (int k = 0; k < 8; ++k) out[k] = kDigits[(h >> (28 - 4 * k)) & 0xf];
}

void check_row_range(const SyntheticCriteoOptions& options, int64_t row_offset) {
  if (options.num_rows < 0 || row_offset < 0) {
    throw ConfigError("gen_data: num_rows (" + std::to_string(options.num_rows) +
                      ") and row offset (" + std::to_string(row_offset) + ") must be non-negative");
  }
}

}  // namespace

std::string synthetic_criteo_cat_string(int feature, int64_t id) {
  if (feature < 0 || feature >= kSynthNumCat) {
    throw ConfigError("synthetic_criteo_cat_string: feature " + std::to_string(feature) +
                      " is not in [0, " + std::to_string(kSynthNumCat) + ")");
  }
  if (id < 0 || id >= kBucketSizes[feature]) {
    throw ConfigError("synthetic_criteo_cat_string: id " + std::to_string(id) + " of cat_" +
                      std::to_string(feature) + " is not in [0, " +
                      std::to_string(kBucketSizes[feature]) + ")");
  }
  std::string s(8, '0');
  cat_hex(feature, id, s.data());
  return s;
}

void write_synthetic_criteo_csv(const std::string& path, const SyntheticCriteoOptions& options,
                                int64_t row_offset) {
  check_row_range(options, row_offset);
  const char d = options.delimiter;
  if (d == '\n' || d == '\r' || d == '-' || (d >= '0' && d <= '9') ||
      (options.string_categoricals && d >= 'a' && d <= 'f')) {
    throw ConfigError(std::string("gen_data: delimiter '") + d +
                      "' would be ambiguous with the values; use ',' or '\\t'");
  }
  const SyntheticCriteoModel model(options.seed);
  TextFileOutput out(path, "gen_data");
  std::string& buf = out.buffer();
  if (options.with_header) {
    buf += synthetic_criteo_header(d);
    buf += '\n';
  }
  for (int64_t i = 0; i < options.num_rows; ++i) {
    const SyntheticCriteoRow r = model.row(row_offset + i);
    buf += static_cast<char>('0' + r.label);
    for (int64_t v : r.ints) {
      buf += d;
      append_int(&buf, v);
    }
    for (int feature = 0; feature < kSynthNumCat; ++feature) {
      buf += d;
      if (options.string_categoricals) {
        char hex[8];
        cat_hex(feature, r.cats[feature], hex);
        buf.append(hex, sizeof(hex));
      } else {
        append_int(&buf, r.cats[feature]);
      }
    }
    buf += '\n';
    out.maybe_flush();
  }
  out.finish();
}

namespace {

// Generates rows [first, first + count) as one writer input table (one column per field).
parquet::Table synthetic_parquet_rows(const SyntheticCriteoModel& model, const parquet::Schema& schema,
                                      bool string_categoricals, int64_t first, int64_t count) {
  std::vector<parquet::ColumnBuilder> columns;
  columns.reserve(1 + kSynthNumInt + kSynthNumCat);
  for (int c = 0; c < 1 + kSynthNumInt + kSynthNumCat; ++c) columns.emplace_back(schema.column(c));
  for (int64_t i = 0; i < count; ++i) {
    const SyntheticCriteoRow r = model.row(first + i);
    columns[0].append<int64_t>(r.label);
    for (int j = 0; j < kSynthNumInt; ++j) columns[1 + j].append<int64_t>(r.ints[j]);
    for (int feature = 0; feature < kSynthNumCat; ++feature) {
      auto& column = columns[1 + kSynthNumInt + feature];
      if (string_categoricals) {
        char hex[8];
        cat_hex(feature, r.cats[feature], hex);
        column.append_string(std::string_view(hex, sizeof(hex)));
      } else {
        column.append<int64_t>(r.cats[feature]);
      }
    }
  }
  parquet::Table table;
  table.num_rows = count;
  for (auto& column : columns) table.columns.push_back(column.finish());
  return table;
}

}  // namespace

void write_synthetic_criteo_parquet(const std::string& path, const SyntheticCriteoOptions& options,
                                    int64_t row_offset) {
  check_row_range(options, row_offset);
  if (options.row_group_rows <= 0) {
    throw ConfigError("gen_data: row_group_rows (" + std::to_string(options.row_group_rows) +
                      ") must be positive");
  }
  using parquet::PhysicalType;
  std::vector<parquet::WriterField> fields;
  auto add_field = [&fields](std::string name, PhysicalType type) {
    parquet::WriterField field;
    field.name = std::move(name);
    field.type = type;
    field.nullable = false;
    field.string = true;  // BYTE_ARRAY columns are annotated STRING (the hex digits are UTF-8)
    fields.push_back(std::move(field));
  };
  add_field("label", PhysicalType::kInt64);
  for (int j = 0; j < kSynthNumInt; ++j) add_field("int_" + std::to_string(j), PhysicalType::kInt64);
  for (int f = 0; f < kSynthNumCat; ++f) {
    add_field("cat_" + std::to_string(f),
              options.string_categoricals ? PhysicalType::kByteArray : PhysicalType::kInt64);
  }
  parquet::WriterOptions writer_options;
  writer_options.compression = parquet::Compression::kSnappy;
  writer_options.dictionary = true;
  writer_options.row_group_rows = options.row_group_rows;

  const SyntheticCriteoModel model(options.seed);
  write_parquet_file(path, std::move(fields), writer_options, "gen_data", [&](parquet::FileWriter& writer) {
    // One row group per write: the writer flushes it at once, so at most one is buffered.
    for (int64_t done = 0; done < options.num_rows; done += options.row_group_rows) {
      const int64_t count = std::min(options.row_group_rows, options.num_rows - done);
      writer.write(synthetic_parquet_rows(model, writer.schema(), options.string_categoricals,
                                          row_offset + done, count));
    }
  });
}

void write_synthetic_criteo(const std::string& path, const SyntheticCriteoOptions& options,
                            int64_t row_offset) {
  if (options.format == "csv") {
    write_synthetic_criteo_csv(path, options, row_offset);
  } else if (options.format == "parquet") {
    write_synthetic_criteo_parquet(path, options, row_offset);
  } else {
    throw NotSupportedError("gen_data --format " + options.format + " (use --format csv or parquet)");
  }
}

}  // namespace tzrec::data
