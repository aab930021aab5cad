#include "datagen/behaviour_dataset.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/error.h"
#include "base/text.h"
#include "data/file_output.h"
#include "datagen/random.h"
#include "parquet/writer.h"

namespace tzrec::datagen {
// Named (not anonymous): datagen compiles as a unity build, where anonymous namespaces of
// several files share one translation unit.
namespace behaviour {

// Category popularity pi(c) ∝ c^-kCategoryZipf (c = 1..C): mild, so that a target's category
// says little about whether it matches a user's interests.
constexpr double kCategoryZipf = 0.7;
// Std-dev of the item popularity n_i: items of a category are drawn ∝ exp(kPopularitySigma n_i).
constexpr double kPopularitySigma = 1.0;
// Weights of the category, brand and item parts of an item's latent vector.
constexpr double kLatentCategory = 1.0;
constexpr double kLatentBrand = 0.6;
constexpr double kLatentItem = 0.4;
// Users have 1..kMaxInterests interest categories.
constexpr int kMaxInterests = 3;
constexpr double kEmptyHistoryRate = 0.1;
constexpr double kHistoryFromInterest = 0.8;
constexpr double kTargetFromInterest = 0.5;
// logit = bias + kAttentionWeight * A + kPopularityWeight * n_target, A with temperature kBeta.
constexpr double kBeta = 5.0;
constexpr double kAttentionWeight = 4.0;
constexpr double kPopularityWeight = 0.3;
constexpr double kTargetPositiveRate = 0.30;
constexpr int64_t kCalibrationRows = 20000;

// Salts of the independent hash streams derived from one seed.
constexpr uint64_t kSaltRow = 0xbe4a710e00000001ULL;
constexpr uint64_t kSaltCalibration = 0xbe4a710e00000002ULL;
constexpr uint64_t kSaltLabel = 0xbe4a710e00000003ULL;
constexpr uint64_t kSaltItemBrand = 0xbe4a710e00000004ULL;
constexpr uint64_t kSaltPopularity = 0xbe4a710e00000005ULL;
constexpr uint64_t kSaltLatentCategory = 0xbe4a710e00000006ULL;
constexpr uint64_t kSaltLatentBrand = 0xbe4a710e00000007ULL;
constexpr uint64_t kSaltLatentItem = 0xbe4a710e00000008ULL;
constexpr uint64_t kSaltUser = 0xbe4a710e00000009ULL;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

int64_t category_of_brand(int64_t brand) { return 1 + (brand - 1) % kBehaviourNumCategories; }

// The three history cells of a row: ids joined by kBehaviourSequenceDelim.
struct HistoryCells {
  std::string items;
  std::string cates;
  std::string brands;
};

void history_cells(const BehaviourModel& model, const BehaviourRow& row, HistoryCells* cells) {
  cells->items.clear();
  cells->cates.clear();
  cells->brands.clear();
  for (size_t j = 0; j < row.history.size(); ++j) {
    if (j > 0) {
      cells->items += kBehaviourSequenceDelim;
      cells->cates += kBehaviourSequenceDelim;
      cells->brands += kBehaviourSequenceDelim;
    }
    const int64_t item = row.history[j];
    append_int(&cells->items, item);
    append_int(&cells->cates, model.item_category(item));
    append_int(&cells->brands, model.item_brand(item));
  }
}

void check_row_range(const BehaviourOptions& options, int64_t row_offset) {
  if (options.num_rows < 0 || row_offset < 0) {
    throw ConfigError("gen_data --dataset behaviour: num_rows (" + std::to_string(options.num_rows) +
                      ") and row offset (" + std::to_string(row_offset) + ") must be non-negative");
  }
}

}  // namespace behaviour

BehaviourModel::BehaviourModel(uint64_t seed) : seed_(seed) {
  constexpr int64_t C = kBehaviourNumCategories;
  constexpr int64_t I = kBehaviourNumItems;
  constexpr int kDim = kBehaviourLatentDim;

  category_cdf_.resize(C);
  double total = 0.0;
  for (int64_t c = 1; c <= C; ++c) {
    total += std::pow(static_cast<double>(c), -behaviour::kCategoryZipf);
    category_cdf_[c - 1] = total;
  }
  for (double& v : category_cdf_) v /= total;
  category_cdf_.back() = 1.0;

  // Latent parts of categories and brands: g ~ N(0, I_dim).
  std::vector<double> g_category((C + 1) * kDim);
  std::vector<double> g_brand((kBehaviourNumBrands + 1) * kDim);
  for (int64_t c = 1; c <= C; ++c) {
    for (int k = 0; k < kDim; ++k) {
      g_category[c * kDim + k] = normal_from(mix(seed, behaviour::kSaltLatentCategory, c, k));
    }
  }
  for (int64_t b = 1; b <= kBehaviourNumBrands; ++b) {
    for (int k = 0; k < kDim; ++k) {
      g_brand[b * kDim + k] = normal_from(mix(seed, behaviour::kSaltLatentBrand, b, k));
    }
  }

  item_brand_.assign(I + 1, 0);
  item_popularity_.assign(I + 1, 0.0);
  item_latent_.assign((I + 1) * kDim, 0.0f);
  category_items_.assign(C + 1, {});
  for (int64_t i = 1; i <= I; ++i) {
    // Items 1..B have brand i (so that every brand, and every category, has items).
    const int64_t brand = i <= kBehaviourNumBrands
                              ? i
                              : 1 + static_cast<int64_t>(mix(seed, behaviour::kSaltItemBrand, i) % kBehaviourNumBrands);
    const int64_t category = behaviour::category_of_brand(brand);
    item_brand_[i] = brand;
    item_popularity_[i] = normal_from(mix(seed, behaviour::kSaltPopularity, i));
    category_items_[category].push_back(i);
    double z[kDim];
    double norm = 0.0;
    for (int k = 0; k < kDim; ++k) {
      z[k] = behaviour::kLatentCategory * g_category[category * kDim + k] +
             behaviour::kLatentBrand * g_brand[brand * kDim + k] +
             behaviour::kLatentItem * normal_from(mix(seed, behaviour::kSaltLatentItem, i, k));
      norm += z[k] * z[k];
    }
    norm = std::sqrt(norm);
    for (int k = 0; k < kDim; ++k) item_latent_[i * kDim + k] = static_cast<float>(z[k] / norm);
  }
  category_item_cdf_.assign(C + 1, {});
  for (int64_t c = 1; c <= C; ++c) {
    const auto& items = category_items_[c];
    auto& cdf = category_item_cdf_[c];
    cdf.resize(items.size());
    double sum = 0.0;
    for (size_t j = 0; j < items.size(); ++j) {
      sum += std::exp(behaviour::kPopularitySigma * item_popularity_[items[j]]);
      cdf[j] = sum;
    }
    for (double& v : cdf) v /= sum;
    cdf.back() = 1.0;
  }

  // Calibrate the bias on rows of a separate stream: mean(sigmoid(logit + b)) is increasing in
  // b, so bisection converges to the target positive rate.
  std::vector<double> logits(behaviour::kCalibrationRows);
  BehaviourRow row;
  for (int64_t i = 0; i < behaviour::kCalibrationRows; ++i) {
    logits[i] = draw_row(mix(seed, behaviour::kSaltCalibration, static_cast<uint64_t>(i)), &row);
  }
  double lo = -20.0;
  double hi = 20.0;
  for (int it = 0; it < 60; ++it) {
    const double mid = 0.5 * (lo + hi);
    double mean = 0.0;
    for (double l : logits) mean += behaviour::sigmoid(l + mid);
    mean /= static_cast<double>(behaviour::kCalibrationRows);
    (mean < behaviour::kTargetPositiveRate ? lo : hi) = mid;
  }
  bias_ = 0.5 * (lo + hi);
}

void BehaviourModel::check_item(int64_t item) const {
  if (item < 1 || item > kBehaviourNumItems) {
    throw ConfigError("behaviour data set: item id " + std::to_string(item) + " is not in [1, " +
                      std::to_string(kBehaviourNumItems) + "]");
  }
}

int64_t BehaviourModel::item_category(int64_t item) const {
  check_item(item);
  return behaviour::category_of_brand(item_brand_[item]);
}

int64_t BehaviourModel::item_brand(int64_t item) const {
  check_item(item);
  return item_brand_[item];
}

double BehaviourModel::item_popularity(int64_t item) const {
  check_item(item);
  return item_popularity_[item];
}

const float* BehaviourModel::item_latent(int64_t item) const {
  check_item(item);
  return item_latent_.data() + item * kBehaviourLatentDim;
}

std::vector<int64_t> BehaviourModel::user_interests(int64_t user) const {
  if (user < 1 || user > kBehaviourNumUsers) {
    throw ConfigError("behaviour data set: user id " + std::to_string(user) + " is not in [1, " +
                      std::to_string(kBehaviourNumUsers) + "]");
  }
  const uint64_t h = mix(seed_, behaviour::kSaltUser, static_cast<uint64_t>(user));
  const int n = 1 + static_cast<int>(h % behaviour::kMaxInterests);
  std::vector<int64_t> interests(n);
  for (int k = 0; k < n; ++k) interests[k] = draw_category(open_unit_from_bits(mix(h, static_cast<uint64_t>(k))));
  return interests;
}

int64_t BehaviourModel::draw_category(double u) const {
  return 1 + static_cast<int64_t>(std::lower_bound(category_cdf_.begin(), category_cdf_.end(), u) -
                                  category_cdf_.begin());
}

int64_t BehaviourModel::draw_item(int64_t category, double u) const {
  const auto& cdf = category_item_cdf_[category];
  return category_items_[category][std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin()];
}

double BehaviourModel::attention(int64_t target, const std::vector<int64_t>& history) const {
  if (history.empty()) return 0.0;
  const float* zt = item_latent(target);
  std::vector<double> s(history.size());
  double max_s = -2.0;
  for (size_t j = 0; j < history.size(); ++j) {
    const float* zh = item_latent(history[j]);
    double dot = 0.0;
    for (int k = 0; k < kBehaviourLatentDim; ++k) dot += static_cast<double>(zt[k]) * zh[k];
    s[j] = dot;
    max_s = std::max(max_s, dot);
  }
  double weight_sum = 0.0;
  double weighted = 0.0;
  for (double v : s) {
    const double w = std::exp(behaviour::kBeta * (v - max_s));
    weight_sum += w;
    weighted += w * v;
  }
  return weighted / weight_sum;
}

double BehaviourModel::logit(int64_t target, const std::vector<int64_t>& history) const {
  return bias_ + behaviour::kAttentionWeight * attention(target, history) +
         behaviour::kPopularityWeight * item_popularity(target);
}

double BehaviourModel::draw_row(uint64_t row_seed, BehaviourRow* row) const {
  Rng rng(row_seed);
  row->user_id = rng.uniform_int(1, kBehaviourNumUsers);
  const std::vector<int64_t> interests = user_interests(row->user_id);
  const uint64_t n_interests = interests.size();
  auto draw_from = [&](double p_interest) {
    // Always three words per draw, so that the stream position does not depend on the branch.
    const double u_source = rng.unit();
    const uint64_t pick = rng.next();
    const double u_item = rng.unit();
    const int64_t category =
        u_source < p_interest ? interests[pick % n_interests] : draw_category(open_unit_from_bits(pick));
    return draw_item(category, u_item);
  };
  const int64_t length =
      rng.unit() < behaviour::kEmptyHistoryRate ? 0 : rng.uniform_int(1, kBehaviourMaxHistory);
  row->history.resize(length);
  for (int64_t j = 0; j < length; ++j) row->history[j] = draw_from(behaviour::kHistoryFromInterest);
  row->item_id = draw_from(behaviour::kTargetFromInterest);
  row->cate_id = item_category(row->item_id);
  row->brand = item_brand(row->item_id);
  row->attention = attention(row->item_id, row->history);
  return behaviour::kAttentionWeight * row->attention +
         behaviour::kPopularityWeight * item_popularity_[row->item_id];
}

BehaviourRow BehaviourModel::row(int64_t index) const {
  BehaviourRow r;
  r.logit = bias_ + draw_row(mix(seed_, behaviour::kSaltRow, static_cast<uint64_t>(index)), &r);
  // The label uses its own stream so that it is independent of the features given the logit.
  const double u = open_unit_from_bits(mix(seed_, behaviour::kSaltLabel, static_cast<uint64_t>(index)));
  r.label = u < behaviour::sigmoid(r.logit) ? 1 : 0;
  return r;
}

const std::vector<std::string>& behaviour_columns() {
  static const std::vector<std::string> kColumns = {
      "label", "user_id", "item_id", "cate_id", "brand", "click_seq__item_id", "click_seq__cate_id",
      "click_seq__brand"};
  return kColumns;
}

void write_behaviour_csv(const std::string& path, const BehaviourOptions& options, int64_t row_offset) {
  behaviour::check_row_range(options, row_offset);
  const char d = options.delimiter;
  if (d == '\n' || d == '\r' || d == '"' || d == kBehaviourSequenceDelim || (d >= '0' && d <= '9')) {
    throw ConfigError(std::string("gen_data --dataset behaviour: delimiter '") + d +
                      "' would be ambiguous with the values; use ',' or '\\t'");
  }
  const BehaviourModel model(options.seed);
  data::TextFileOutput out(path, "gen_data");
  std::string& buf = out.buffer();
  if (options.with_header) {
    const auto& columns = behaviour_columns();
    for (size_t c = 0; c < columns.size(); ++c) {
      if (c > 0) buf += d;
      buf += columns[c];
    }
    buf += '\n';
  }
  behaviour::HistoryCells cells;
  for (int64_t i = 0; i < options.num_rows; ++i) {
    const BehaviourRow r = model.row(row_offset + i);
    behaviour::history_cells(model, r, &cells);
    buf += static_cast<char>('0' + r.label);
    for (int64_t v : {r.user_id, r.item_id, r.cate_id, r.brand}) {
      buf += d;
      append_int(&buf, v);
    }
    for (const std::string* cell : {&cells.items, &cells.cates, &cells.brands}) {
      buf += d;
      buf += *cell;
    }
    buf += '\n';
    out.maybe_flush();
  }
  out.finish();
}

void write_behaviour_parquet(const std::string& path, const BehaviourOptions& options, int64_t row_offset) {
  behaviour::check_row_range(options, row_offset);
  if (options.row_group_rows <= 0) {
    throw ConfigError("gen_data --dataset behaviour: row_group_rows (" + std::to_string(options.row_group_rows) +
                      ") must be positive");
  }
  const auto& names = behaviour_columns();
  constexpr size_t kNumIdColumns = 5;  // label, user_id, item_id, cate_id, brand
  std::vector<parquet::WriterField> fields;
  for (size_t c = 0; c < names.size(); ++c) {
    parquet::WriterField field;
    field.name = names[c];
    field.type = c < kNumIdColumns ? parquet::PhysicalType::kInt64 : parquet::PhysicalType::kByteArray;
    field.nullable = false;
    field.string = true;
    fields.push_back(std::move(field));
  }
  parquet::WriterOptions writer_options;
  writer_options.compression = parquet::Compression::kSnappy;
  writer_options.dictionary = true;
  writer_options.row_group_rows = options.row_group_rows;

  const BehaviourModel model(options.seed);
  data::write_parquet_file(path, std::move(fields), writer_options, "gen_data", [&](parquet::FileWriter& writer) {
    behaviour::HistoryCells cells;
    // One row group per write: the writer flushes it at once, so at most one is buffered.
    for (int64_t done = 0; done < options.num_rows; done += options.row_group_rows) {
      const int64_t count = std::min(options.row_group_rows, options.num_rows - done);
      std::vector<parquet::ColumnBuilder> columns;
      columns.reserve(names.size());
      for (size_t c = 0; c < names.size(); ++c) columns.emplace_back(writer.schema().column(static_cast<int>(c)));
      for (int64_t i = 0; i < count; ++i) {
        const BehaviourRow r = model.row(row_offset + done + i);
        behaviour::history_cells(model, r, &cells);
        columns[0].append<int64_t>(r.label);
        columns[1].append<int64_t>(r.user_id);
        columns[2].append<int64_t>(r.item_id);
        columns[3].append<int64_t>(r.cate_id);
        columns[4].append<int64_t>(r.brand);
        columns[5].append_string(cells.items);
        columns[6].append_string(cells.cates);
        columns[7].append_string(cells.brands);
      }
      parquet::Table table;
      table.num_rows = count;
      for (auto& column : columns) table.columns.push_back(column.finish());
      writer.write(std::move(table));
    }
  });
}

void write_behaviour_dataset(const std::string& path, const BehaviourOptions& options, int64_t row_offset) {
  if (options.format == "csv") {
    write_behaviour_csv(path, options, row_offset);
  } else if (options.format == "parquet") {
    write_behaviour_parquet(path, options, row_offset);
  } else {
    throw NotSupportedError("gen_data --format " + options.format + " (use --format csv or parquet)");
  }
}

}  // namespace tzrec::datagen
