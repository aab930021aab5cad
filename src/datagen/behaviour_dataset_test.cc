#include "datagen/behaviour_dataset.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "data/testing_util.h"
#include "parquet/file_reader.h"

namespace tzrec::datagen {
namespace behaviour_dataset_test {

using data::testing::error_of;
using data::testing::read_file;
using data::testing::TempDir;

std::vector<std::string> split(const std::string& s, char d) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == d) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines = split(text, '\n');
  EXPECT_EQ(lines.back(), "") << "file must end with a newline";
  lines.pop_back();
  return lines;
}

// A history cell: '|'-joined ids, or the empty string for no items.
std::vector<int64_t> ids_of(const std::string& cell) {
  std::vector<int64_t> ids;
  if (cell.empty()) return ids;
  for (const std::string& s : split(cell, kBehaviourSequenceDelim)) ids.push_back(std::stoll(s));
  return ids;
}

// One CSV line parsed back.
struct ParsedRow {
  int label = 0;
  int64_t user_id = 0;
  int64_t item_id = 0;
  int64_t cate_id = 0;
  int64_t brand = 0;
  std::vector<int64_t> items;
  std::vector<int64_t> cates;
  std::vector<int64_t> brands;
};

ParsedRow parse_line(const std::string& line) {
  const auto cells = split(line, ',');
  EXPECT_EQ(cells.size(), 8u) << line;
  ParsedRow r;
  if (cells.size() != 8) return r;
  r.label = std::stoi(cells[0]);
  r.user_id = std::stoll(cells[1]);
  r.item_id = std::stoll(cells[2]);
  r.cate_id = std::stoll(cells[3]);
  r.brand = std::stoll(cells[4]);
  r.items = ids_of(cells[5]);
  r.cates = ids_of(cells[6]);
  r.brands = ids_of(cells[7]);
  return r;
}

// Writes rows [0, n) of seed `seed` as CSV with a header and parses them back.
std::vector<ParsedRow> generate(const TempDir& dir, int64_t n, uint64_t seed = 2024) {
  BehaviourOptions o;
  o.num_rows = n;
  o.seed = seed;
  const std::string path = dir.path() + "/rows_" + std::to_string(seed) + ".csv";
  write_behaviour_csv(path, o);
  const auto lines = lines_of(read_file(path));
  std::vector<ParsedRow> rows;
  for (size_t i = 1; i < lines.size(); ++i) rows.push_back(parse_line(lines[i]));
  return rows;
}

// The hidden model's attention term computed here from the latent vectors alone (not with
// BehaviourModel::attention): sum_j softmax_j(5 s_j) s_j, s_j = <z_target, z_j>; 0 when empty.
double attention_of(const BehaviourModel& model, int64_t target, const std::vector<int64_t>& history) {
  if (history.empty()) return 0.0;
  const float* zt = model.item_latent(target);
  std::vector<double> s;
  for (int64_t item : history) {
    const float* z = model.item_latent(item);
    double dot = 0.0;
    for (int k = 0; k < kBehaviourLatentDim; ++k) dot += static_cast<double>(zt[k]) * static_cast<double>(z[k]);
    s.push_back(dot);
  }
  const double max_s = *std::max_element(s.begin(), s.end());
  double num = 0.0;
  double den = 0.0;
  for (double v : s) {
    const double w = std::exp(5.0 * (v - max_s));
    num += w * v;
    den += w;
  }
  return num / den;
}

double correlation(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double mx = 0.0;
  double my = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  double sxy = 0.0;
  double sxx = 0.0;
  double syy = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxy / std::sqrt(sxx * syy);
}

// Exact AUC of scores against 0/1 labels (average ranks for ties).
double exact_auc(std::vector<std::pair<double, int>> v) {
  std::sort(v.begin(), v.end());
  double pos = 0;
  double rank_sum = 0;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j < v.size() && v[j].first == v[i].first) ++j;
    const double avg_rank = 0.5 * static_cast<double>(i + 1 + j);
    for (size_t k = i; k < j; ++k) {
      if (v[k].second) {
        rank_sum += avg_rank;
        pos += 1;
      }
    }
    i = j;
  }
  const double neg = static_cast<double>(v.size()) - pos;
  return (rank_sum - pos * (pos + 1) / 2) / (pos * neg);
}

TEST(BehaviourDataset, SameSeedSameBytesDifferentSeedDifferent) {
  TempDir dir;
  BehaviourOptions o;
  o.num_rows = 300;
  write_behaviour_csv(dir.path() + "/a.csv", o);
  write_behaviour_csv(dir.path() + "/b.csv", o);
  const std::string a = read_file(dir.path() + "/a.csv");
  EXPECT_EQ(a, read_file(dir.path() + "/b.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/a.csv.tmp"));
  o.seed = 2025;
  write_behaviour_csv(dir.path() + "/c.csv", o);
  const std::string c = read_file(dir.path() + "/c.csv");
  EXPECT_EQ(c.substr(0, c.find('\n')), a.substr(0, a.find('\n')));  // same header
  EXPECT_NE(a, c);
  // Two models of one seed agree (nothing depends on construction order or state).
  const BehaviourModel m1(7);
  const BehaviourModel m2(7);
  EXPECT_EQ(m1.bias(), m2.bias());
  for (int64_t i : {0, 1, 99, 123456}) {
    const BehaviourRow r1 = m1.row(i);
    const BehaviourRow r2 = m2.row(i);
    EXPECT_EQ(r1.label, r2.label);
    EXPECT_EQ(r1.item_id, r2.item_id);
    EXPECT_EQ(r1.history, r2.history);
    EXPECT_EQ(r1.logit, r2.logit);
  }
}

TEST(BehaviourDataset, PinnedRows) {
  // Pins the output of the default seed so that a change of the generator (or a platform whose
  // libm differs) is noticed: the AUC figures in bench/README.md are measured on these rows.
  TempDir dir;
  BehaviourOptions o;
  o.num_rows = 3;
  write_behaviour_csv(dir.path() + "/p.csv", o);
  const auto lines = lines_of(read_file(dir.path() + "/p.csv"));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1], "0,85267,25253,31,331,,,");  // an empty history
  EXPECT_EQ(lines[3],
            "0,18551,8097,100,1400,"
            "26352|13757|10866|14751|21680|9388|10024|3496|38672|29008|6931|29488|15573|43131|42056|45303|26530|"
            "49022|11728|26683|42056,"
            "100|100|100|100|100|100|100|100|100|54|100|100|100|100|100|100|100|100|100|100|100,"
            "900|1600|1600|1800|700|1300|200|900|1800|1654|400|1700|1300|600|2000|600|800|1200|300|1800|2000");
  const BehaviourRow r1 = BehaviourModel(2024).row(1);
  EXPECT_EQ(r1.label, 1);
  EXPECT_EQ(r1.history.size(), 36u);
}

TEST(BehaviourDataset, RowOffsetsContinueTheSameRows) {
  TempDir dir;
  BehaviourOptions o;
  o.with_header = false;
  o.num_rows = 50;
  write_behaviour_csv(dir.path() + "/all.csv", o);
  o.num_rows = 20;
  write_behaviour_csv(dir.path() + "/head.csv", o);
  o.num_rows = 30;
  write_behaviour_csv(dir.path() + "/tail.csv", o, /*row_offset=*/20);
  EXPECT_EQ(read_file(dir.path() + "/head.csv") + read_file(dir.path() + "/tail.csv"),
            read_file(dir.path() + "/all.csv"));
}

TEST(BehaviourDataset, ColumnsIdsAndHistories) {
  TempDir dir;
  BehaviourOptions o;
  o.num_rows = 4000;
  write_behaviour_csv(dir.path() + "/t.csv", o);
  const auto lines = lines_of(read_file(dir.path() + "/t.csv"));
  ASSERT_EQ(lines.size(), 4001u);
  EXPECT_EQ(lines[0],
            "label,user_id,item_id,cate_id,brand,click_seq__item_id,click_seq__cate_id,click_seq__brand");
  EXPECT_EQ(split(lines[0], ','), behaviour_columns());
  const BehaviourModel model(o.seed);
  int64_t empty = 0;
  int64_t over_50 = 0;
  int64_t max_length = 0;
  int64_t positives = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const ParsedRow r = parse_line(lines[i]);
    ASSERT_TRUE(r.label == 0 || r.label == 1) << "line " << i + 1;
    positives += r.label;
    ASSERT_GE(r.user_id, 1);
    ASSERT_LE(r.user_id, kBehaviourNumUsers);
    ASSERT_GE(r.item_id, 1);
    ASSERT_LE(r.item_id, kBehaviourNumItems);
    EXPECT_EQ(r.cate_id, model.item_category(r.item_id)) << "line " << i + 1;
    EXPECT_EQ(r.brand, model.item_brand(r.item_id)) << "line " << i + 1;
    ASSERT_GE(r.cate_id, 1);
    ASSERT_LE(r.cate_id, kBehaviourNumCategories);
    ASSERT_GE(r.brand, 1);
    ASSERT_LE(r.brand, kBehaviourNumBrands);
    // The three history columns describe the same items.
    ASSERT_EQ(r.items.size(), r.cates.size()) << "line " << i + 1;
    ASSERT_EQ(r.items.size(), r.brands.size()) << "line " << i + 1;
    for (size_t j = 0; j < r.items.size(); ++j) {
      ASSERT_GE(r.items[j], 1);
      ASSERT_LE(r.items[j], kBehaviourNumItems);
      ASSERT_EQ(r.cates[j], model.item_category(r.items[j]));
      ASSERT_EQ(r.brands[j], model.item_brand(r.items[j]));
    }
    const int64_t length = static_cast<int64_t>(r.items.size());
    empty += length == 0;
    over_50 += length > 50;
    max_length = std::max(max_length, length);
  }
  const double n = 4000.0;
  // Lengths: 0 with probability 0.1, else uniform in [1, 60] (over 50: 0.9 * 10 / 60 = 0.15).
  EXPECT_GT(empty / n, 0.07);
  EXPECT_LT(empty / n, 0.13);
  EXPECT_GT(over_50 / n, 0.12);
  EXPECT_LT(over_50 / n, 0.18);
  EXPECT_EQ(max_length, kBehaviourMaxHistory);
  EXPECT_GT(positives / n, 0.27);
  EXPECT_LT(positives / n, 0.33);
}

TEST(BehaviourDataset, HistoriesFollowTheUsersInterests) {
  // About 80% of history items come from the user's 1..3 interest categories.
  const BehaviourModel model(2024);
  int64_t items = 0;
  int64_t in_interests = 0;
  for (int64_t i = 0; i < 2000; ++i) {
    const BehaviourRow r = model.row(i);
    const std::vector<int64_t> interests = model.user_interests(r.user_id);
    ASSERT_GE(interests.size(), 1u);
    ASSERT_LE(interests.size(), 3u);
    for (int64_t item : r.history) {
      ++items;
      in_interests += std::count(interests.begin(), interests.end(), model.item_category(item)) > 0;
    }
  }
  const double share = static_cast<double>(in_interests) / static_cast<double>(items);
  EXPECT_GT(share, 0.78);
  EXPECT_LT(share, 0.86);
}

TEST(BehaviourDataset, LabelsDependOnTheAttentionBetweenTargetAndHistory) {
  TempDir dir;
  const int64_t n = 20000;
  const std::vector<ParsedRow> rows = generate(dir, n);
  ASSERT_EQ(static_cast<int64_t>(rows.size()), n);
  const BehaviourModel model(2024);
  std::vector<double> labels;
  std::vector<double> attention;
  std::vector<double> shuffled;  // the target against the next row's history
  std::vector<std::pair<double, int>> scored;
  for (int64_t i = 0; i < n; ++i) {
    const ParsedRow& r = rows[i];
    labels.push_back(r.label);
    const double a = attention_of(model, r.item_id, r.items);
    attention.push_back(a);
    shuffled.push_back(attention_of(model, r.item_id, rows[(i + 1) % n].items));
    scored.emplace_back(a, r.label);
    // The generator's own figure agrees with the independent one.
    ASSERT_NEAR(model.attention(r.item_id, r.items), a, 1e-9) << "row " << i;
  }
  const double corr = correlation(attention, labels);
  const double corr_shuffled = correlation(shuffled, labels);
  const double auc = exact_auc(scored);
  // The history's attention term explains much of the label; the same target against another
  // user's history explains little (what remains is how often a target's category is popular).
  EXPECT_GT(corr, 0.3) << "attention/label correlation";
  EXPECT_LT(corr_shuffled, corr / 3) << "shuffled-history correlation " << corr_shuffled;
  EXPECT_GT(auc, 0.70) << "AUC of the attention term alone";
  // The oracle logit ranks labels better still (plus the item popularity term).
  std::vector<std::pair<double, int>> oracle;
  for (int64_t i = 0; i < n; ++i) oracle.emplace_back(model.row(i).logit, rows[i].label);
  EXPECT_GT(exact_auc(oracle), auc);
}

TEST(BehaviourDataset, UsersHaveFewRowsEach) {
  // user_id cannot stand in for the history: 50k rows spread over 100k users.
  const BehaviourModel model(2024);
  std::vector<int> rows_of(kBehaviourNumUsers + 1, 0);
  for (int64_t i = 0; i < 50000; ++i) ++rows_of[model.row(i).user_id];
  EXPECT_LE(*std::max_element(rows_of.begin(), rows_of.end()), 8);
}

TEST(BehaviourDataset, ParquetHoldsTheCsvRows) {
  TempDir dir;
  BehaviourOptions o;
  o.num_rows = 700;
  o.row_group_rows = 256;
  o.with_header = false;
  const std::string pq = dir.path() + "/t.parquet";
  write_behaviour_parquet(pq, o, /*row_offset=*/17);
  write_behaviour_csv(dir.path() + "/t.csv", o, /*row_offset=*/17);
  EXPECT_FALSE(std::filesystem::exists(pq + ".tmp"));
  const auto lines = lines_of(read_file(dir.path() + "/t.csv"));
  auto reader = parquet::FileReader::open(pq);
  ASSERT_EQ(reader->num_rows(), 700);
  ASSERT_EQ(reader->metadata().row_groups.size(), 3u);
  const parquet::Schema& schema = reader->schema();
  ASSERT_EQ(schema.num_columns(), 8);
  for (int c = 0; c < schema.num_columns(); ++c) {
    EXPECT_EQ(schema.column(c).path_string, behaviour_columns()[c]);
    EXPECT_EQ(schema.column(c).type, c < 5 ? parquet::PhysicalType::kInt64 : parquet::PhysicalType::kByteArray)
        << schema.column(c).path_string;
  }
  const parquet::Table t = reader->read();
  ASSERT_EQ(t.num_rows, 700);
  for (int64_t i = 0; i < t.num_rows; ++i) {
    std::string line;
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (c > 0) line += ',';
      const parquet::ColumnData& col = t.columns[c];
      line += col.type() == parquet::PhysicalType::kByteArray ? std::string(col.bytes(i))
                                                              : std::to_string(col.data<int64_t>()[i]);
    }
    ASSERT_EQ(line, lines[static_cast<size_t>(i)]) << "row " << i;
  }
}

TEST(BehaviourDataset, ExampleConfigsMatchTheIdRanges) {
  // num_buckets of the examples' features must cover the generator's ids (0 .. N).
  for (const char* name : {"examples/multi_tower_din_behaviour.config", "examples/multi_tower_behaviour.config"}) {
    const std::string cfg = read_file(data::testing::fixture(name));
    ASSERT_FALSE(cfg.empty()) << name;
    std::regex re("feature_name:\\s*\"(\\w+)\"[^}]*num_buckets:\\s*(\\d+)");
    int found = 0;
    for (auto it = std::sregex_iterator(cfg.begin(), cfg.end(), re); it != std::sregex_iterator(); ++it) {
      const std::string feature = (*it)[1];
      const int64_t buckets = std::stoll((*it)[2]);
      ++found;
      if (feature == "user_id") {
        EXPECT_EQ(buckets, kBehaviourNumUsers + 1) << name;
      } else if (feature == "item_id") {
        EXPECT_EQ(buckets, kBehaviourNumItems + 1) << name;
      } else if (feature == "cate_id") {
        EXPECT_EQ(buckets, kBehaviourNumCategories + 1) << name;
      } else if (feature == "brand") {
        EXPECT_EQ(buckets, kBehaviourNumBrands + 1) << name;
      } else {
        ADD_FAILURE() << name << ": unexpected feature " << feature;
      }
    }
    EXPECT_GE(found, 4) << name;
  }
}

TEST(BehaviourDataset, BadInput) {
  TempDir dir;
  BehaviourOptions o;
  o.num_rows = 10;
  o.delimiter = '|';
  EXPECT_NE(error_of<ConfigError>([&] { write_behaviour_csv(dir.path() + "/x.csv", o); }).find("delimiter '|'"),
            std::string::npos);
  o.delimiter = ',';
  o.num_rows = -1;
  EXPECT_NE(error_of<ConfigError>([&] { write_behaviour_csv(dir.path() + "/x.csv", o); }).find("num_rows (-1)"),
            std::string::npos);
  o.num_rows = 10;
  o.format = "json";
  EXPECT_NE(error_of<NotSupportedError>([&] { write_behaviour_dataset(dir.path() + "/x.json", o); })
                .find("--format json"),
            std::string::npos);
  o.format = "csv";
  EXPECT_NE(error_of<IoError>([&] { write_behaviour_dataset(dir.path() + "/missing/x.csv", o); })
                .find("missing/x.csv.tmp"),
            std::string::npos);
  const BehaviourModel model(1);
  EXPECT_NE(error_of<ConfigError>([&] { model.item_category(0); }).find("item id 0"), std::string::npos);
  EXPECT_NE(error_of<ConfigError>([&] { model.user_interests(kBehaviourNumUsers + 1); }).find("user id"),
            std::string::npos);
}

}  // namespace behaviour_dataset_test
}  // namespace tzrec::datagen
