#include "datagen/generative_rows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/pipeline_config.h"
#include "data/testing_util.h"
#include "datagen/gen_data.h"
#include "datagen/row_generator.h"
#include "parquet/file_reader.h"
#include "parquet/json_rows.h"

namespace tzrec::datagen {
namespace generative_rows_test {

using data::testing::TempDir;
using parquet::Json;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string config_text(const std::string& name) {
  return read_text(std::string(TZREC_SOURCE_DIR) + "/tests/configs/torcheasyrec/" + name + ".config");
}

void replace_all(std::string* text, const std::string& from, const std::string& to) {
  for (size_t p = 0; (p = text->find(from, p)) != std::string::npos; p += to.size()) text->replace(p, from.size(), to);
}

std::string write_config(const TempDir& tmp, const std::string& text) {
  const std::string path = tmp.file("p.config");
  std::ofstream(path) << text;
  return path;
}

GenDataResult generate(const TempDir& tmp, const std::string& text, int64_t rows, uint64_t seed = 2024,
                       const std::string& out = "out") {
  GenDataOptions options;
  options.pipeline_config_path = write_config(tmp, text);
  options.output_dir = tmp.file(out);
  options.num_rows = rows;
  options.num_eval_rows = 0;
  options.seed = seed;
  return generate_data(options);
}

std::vector<Json> read_rows(const std::string& path) {
  auto reader = parquet::FileReader::open(path);
  auto table = reader->read();
  std::vector<Json> rows;
  for (int64_t r = 0; r < reader->num_rows(); ++r) rows.push_back(parquet::row_to_json(table, reader->schema(), r));
  return rows;
}

// The '|'-joined integers of a sequence cell.
std::vector<int64_t> ints(const Json& cell) {
  std::vector<int64_t> out;
  std::istringstream in(cell.get<std::string>());
  std::string part;
  while (std::getline(in, part, '|')) out.push_back(std::stoll(part));
  return out;
}

std::vector<int64_t> list(const Json& cell) { return cell.get<std::vector<int64_t>>(); }

// The rows of a history channel and its candidates, as written.
struct Session {
  std::vector<int64_t> items, times, actions, watch;
  std::vector<int64_t> cand_items, query_times, cand_actions, cand_watch;
};

Session session(const Json& row, const std::string& history = "uih_seq") {
  Session s;
  s.items = ints(row[history + "__video_id"]);
  s.times = ints(row[history + "__action_timestamp"]);
  s.actions = ints(row[history + "__action_weight"]);
  s.watch = ints(row[history + "__watch_time"]);
  s.cand_items = ints(row["cand_seq__video_id"]);
  if (row.contains("cand_seq__query_time")) s.query_times = ints(row["cand_seq__query_time"]);
  s.cand_actions = list(row["cand_seq__action_weight"]);
  s.cand_watch = list(row["cand_seq__watch_time"]);
  return s;
}

TEST(GenerativeRows, KuaiRandRowsHaveHistoriesAndOneLabelPerCandidate) {
  TempDir tmp;
  const auto result = generate(tmp, config_text("dlrm_hstu_kuairand_1k"), 400);
  const auto rows = read_rows(result.train_path);
  ASSERT_EQ(rows.size(), 400u);
  size_t longest = 0;
  size_t shortest = 1000;
  size_t candidates = 0;
  std::map<int64_t, std::string> context_of;  // user id -> its contextual values
  for (size_t r = 0; r < rows.size(); ++r) {
    const Session s = session(rows[r]);
    const size_t n = s.items.size();
    ASSERT_TRUE(n >= 1 && n <= 256) << "row " << r << ": " << n << " events";
    ASSERT_EQ(s.times.size(), n);
    ASSERT_EQ(s.actions.size(), n);
    ASSERT_EQ(s.watch.size(), n);
    longest = std::max(longest, n);
    shortest = std::min(shortest, n);
    for (size_t e = 0; e < n; ++e) {
      ASSERT_TRUE(s.items[e] >= 0 && s.items[e] < kMaxGenerativeItems);
      ASSERT_GE(s.watch[e], 0);
      ASSERT_GT(s.times[e], 1500000000);
      ASSERT_LE(s.times[e], 1651968000);
      if (e > 0) ASSERT_GT(s.times[e], s.times[e - 1]) << "row " << r << ": timestamps must ascend";
    }
    const size_t c = s.cand_items.size();
    ASSERT_TRUE(c >= 1 && c <= 8) << "row " << r;
    ASSERT_EQ(s.query_times.size(), c);
    ASSERT_EQ(s.cand_actions.size(), c) << "row " << r << ": one action label per candidate";
    ASSERT_EQ(s.cand_watch.size(), c) << "row " << r << ": one watch time per candidate";
    ASSERT_GE(s.query_times.front(), s.times.back()) << "row " << r << ": candidates follow the history";
    for (size_t k = 1; k < c; ++k) ASSERT_GE(s.query_times[k], s.query_times[k - 1]);
    candidates += c;
    const int64_t user = rows[r]["user_id"].get<int64_t>();
    ASSERT_TRUE(user >= 0 && user < kMaxGenerativeUsers);
    std::string context;
    for (const char* f : {"user_active_degree", "follow_user_num_range", "fans_user_num_range", "friend_user_num_range",
                          "register_days_range"}) {
      context += std::to_string(rows[r][f].get<int64_t>()) + ",";
    }
    auto [it, added] = context_of.emplace(user, context);
    EXPECT_EQ(it->second, context) << "user " << user << " has other contextual values in row " << r;
  }
  EXPECT_LE(shortest, 3u);  // log-uniform lengths: short and long histories
  EXPECT_GE(longest, 150u);
  EXPECT_LT(context_of.size(), rows.size());  // users come back
  const double mean_candidates = static_cast<double>(candidates) / static_cast<double>(rows.size());
  EXPECT_GT(mean_candidates, 3.5);
  EXPECT_LT(mean_candidates, 5.5);
}

TEST(GenerativeRows, ActionBitsComeOnlyFromTheConfiguredBitmasks) {
  std::string text = config_text("dlrm_hstu_kuairand_1k");
  replace_all(&text, "action_weights: [1, 2, 4, 8, 16, 32, 64, 128]", "action_weights: [1, 4]");
  for (const char* mask : {"2", "8", "16", "32", "64", "128"}) {
    replace_all(&text, std::string("task_bitmask: ") + mask + "\n", "task_bitmask: 4\n");
  }
  TempDir tmp;
  const auto rows = read_rows(generate(tmp, text, 200).train_path);
  std::set<int64_t> seen;
  for (const auto& row : rows) {
    const Session s = session(row);
    for (int64_t a : s.actions) seen.insert(a);
    for (int64_t a : s.cand_actions) seen.insert(a);
  }
  EXPECT_EQ(seen, (std::set<int64_t>{0, 1, 4, 5}));
}

TEST(GenerativeRows, DeterministicForASeed) {
  TempDir tmp;
  const std::string text = config_text("dlrm_hstu_kuairand_1k");
  const auto a = generate(tmp, text, 50, 7, "a");
  const auto b = generate(tmp, text, 50, 7, "b");
  const auto c = generate(tmp, text, 50, 8, "c");
  EXPECT_EQ(read_text(a.train_path), read_text(b.train_path));
  EXPECT_NE(read_text(a.train_path), read_text(c.train_path));
}

// Area under the ROC curve of `score` for the 0/1 `label` (ties count half).
double auc(const std::vector<double>& score, const std::vector<int>& label) {
  std::vector<size_t> order(score.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score[a] < score[b]; });
  double rank_sum = 0.0;
  double positives = 0.0;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && score[order[j]] == score[order[i]]) ++j;
    const double rank = 0.5 * static_cast<double>(i + j + 1);
    for (size_t k = i; k < j; ++k) {
      if (label[order[k]]) {
        rank_sum += rank;
        positives += 1.0;
      }
    }
    i = j;
  }
  const double negatives = static_cast<double>(order.size()) - positives;
  return (rank_sum - positives * (positives + 1.0) / 2.0) / (positives * negatives);
}

TEST(GenerativeRows, LabelsFollowTheAffinityOfTheCandidateToTheHistory) {
  TempDir tmp;
  const std::string text = config_text("dlrm_hstu_kuairand_1k");
  const uint64_t seed = 11;
  const auto rows = read_rows(generate(tmp, text, 1500, seed).train_path);
  const ColumnPlan plan = plan_columns(config::parse_pipeline_config_text(text, "p.config"));
  const RowGenerator generator(plan, seed);
  ASSERT_NE(generator.generative(), nullptr);
  const InteractionModel& model = generator.generative()->model();
  std::vector<double> affinity;
  std::vector<int> click;
  std::vector<double> watch;
  for (const auto& row : rows) {
    const Session s = session(row);
    std::vector<Interaction> history(s.items.size());
    for (size_t e = 0; e < history.size(); ++e) {
      history[e].item = s.items[e];
      history[e].action = static_cast<uint64_t>(s.actions[e]);
    }
    for (size_t k = 0; k < s.cand_items.size(); ++k) {
      affinity.push_back(model.recent_affinity(history, s.cand_items[k]));
      click.push_back((s.cand_actions[k] & 1) != 0 ? 1 : 0);
      watch.push_back(static_cast<double>(s.cand_watch[k]));
    }
  }
  // The positive rate and watch time of the candidates most and least like the recent history.
  std::vector<size_t> order(affinity.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return affinity[a] < affinity[b]; });
  const size_t third = order.size() / 3;
  double low_rate = 0, high_rate = 0, low_watch = 0, high_watch = 0;
  for (size_t i = 0; i < third; ++i) {
    low_rate += click[order[i]];
    low_watch += watch[order[i]];
    high_rate += click[order[order.size() - 1 - i]];
    high_watch += watch[order[order.size() - 1 - i]];
  }
  low_rate /= static_cast<double>(third);
  high_rate /= static_cast<double>(third);
  EXPECT_GT(high_rate - low_rate, 0.25) << "low " << low_rate << " high " << high_rate;
  EXPECT_GT(high_watch, 1.3 * low_watch);
  EXPECT_GT(auc(affinity, click), 0.7);
}

TEST(GenerativeRows, HistoryCapAndDescendingTimestamps) {
  std::string text = config_text("dlrm_hstu_kuairand_1k");
  const std::string anchor = "max_seq_len: 4096";
  text.replace(text.find(anchor), anchor.size(), anchor + "\n sequence_timestamp_is_ascending: false");
  TempDir tmp;
  GenDataOptions options;
  options.pipeline_config_path = write_config(tmp, text);
  options.output_dir = tmp.file("out");
  options.num_rows = 400;
  options.num_eval_rows = 0;
  options.max_history_length = 16;
  options.max_candidates = 3;
  size_t longest = 0;
  size_t most_candidates = 0;
  for (const auto& row : read_rows(generate_data(options).train_path)) {
    const Session s = session(row);
    ASSERT_LE(s.items.size(), 16u);
    ASSERT_LE(s.cand_items.size(), 3u);
    longest = std::max(longest, s.items.size());
    most_candidates = std::max(most_candidates, s.cand_items.size());
    for (size_t e = 1; e < s.times.size(); ++e) ASSERT_LT(s.times[e], s.times[e - 1]) << "newest first";
    for (size_t k = 1; k < s.query_times.size(); ++k) ASSERT_LE(s.query_times[k], s.query_times[k - 1]);
    ASSERT_GE(s.query_times.back(), s.times.front());
    ASSERT_EQ(s.cand_actions.size(), s.cand_items.size());
  }
  EXPECT_EQ(longest, 16u);
  EXPECT_EQ(most_candidates, 3u);
}

// TorchEasyRec's kuairand benchmark config (tzrec/benchmark/configs/kuairand/dlrm_hstu.config) sets
// no sequence_length on its FG_NONE sequences: the histories and candidates are then capped by
// --max_history_length and --max_candidates alone.
TEST(GenerativeRows, SequencesWithoutSequenceLengthAreCappedByTheOptions) {
  TempDir tmp;
  GenDataOptions options;
  options.pipeline_config_path = write_config(tmp, config_text("benchmark/benchmark_kuairand_dlrm_hstu"));
  options.output_dir = tmp.file("out");
  options.num_rows = 300;
  options.num_eval_rows = 0;
  options.max_history_length = 40;
  options.max_candidates = 5;
  const auto result = generate_data(options);
  ASSERT_EQ(result.plan.generative.channels.size(), 1u);
  EXPECT_EQ(result.plan.generative.channels[0].sequence_length, 0);
  EXPECT_EQ(result.plan.generative.candidates.sequence_length, 0);
  auto count = [](const Json& cell) {  // the config's sequence_delim is the default ';'
    const std::string text = cell.get<std::string>();
    return static_cast<size_t>(std::count(text.begin(), text.end(), ';')) + 1;
  };
  size_t longest = 0;
  size_t most_candidates = 0;
  for (const auto& row : read_rows(result.train_path)) {
    const size_t items = count(row["video_id"]);
    const size_t candidates = count(row["item_video_id"]);
    ASSERT_EQ(count(row["action_timestamp"]), items);
    ASSERT_EQ(count(row["item_query_time"]), candidates);
    longest = std::max(longest, items);
    most_candidates = std::max(most_candidates, candidates);
  }
  EXPECT_EQ(longest, 40u);
  EXPECT_EQ(most_candidates, 5u);
}

TEST(GenerativeRows, HstuMatchCandidatesArePositivesOfTheItemTable) {
  TempDir tmp;
  const auto result = generate(tmp, config_text("hstu_kuairand_1k"), 300);
  ASSERT_EQ(result.table_paths.size(), 2u);  // the item table, then the same items as items.parquet
  std::set<int64_t> table;
  std::istringstream lines(read_text(result.table_paths[0]));
  std::string line;
  std::getline(lines, line);  // header
  while (std::getline(lines, line)) {
    const auto tab = line.find('\t');
    table.insert(std::stoll(line.substr(0, tab)));
    EXPECT_EQ(line.substr(line.rfind('\t') + 1), line.substr(0, tab));  // attr video_id: the id
  }
  EXPECT_EQ(static_cast<int64_t>(table.size()), kMaxGenerativeItems);
  for (const auto& row : read_rows(result.train_path)) {
    const Session s = session(row);
    for (size_t k = 0; k < s.cand_items.size(); ++k) {
      EXPECT_TRUE(table.count(s.cand_items[k])) << s.cand_items[k];
      EXPECT_NE(s.cand_actions[k], 0) << "a positive has an action";
    }
    EXPECT_GE(row["request_time"].get<double>(), static_cast<double>(s.times.back()));
  }
}

TEST(GenerativeRows, UltraHstuChannelsHoldTheirActions) {
  TempDir tmp;
  size_t clicks = 0;
  size_t views = 0;
  for (const auto& row : read_rows(generate(tmp, config_text("ultra_hstu_cutlass_kuairand_1k"), 100).train_path)) {
    const Session click = session(row, "click_seq");
    const Session view = session(row, "view_seq");
    for (int64_t a : click.actions) ASSERT_NE(a & 1, 0);
    for (int64_t a : view.actions) ASSERT_NE(a & 64, 0);
    for (size_t e = 1; e < view.times.size(); ++e) ASSERT_GT(view.times[e], view.times[e - 1]);
    ASSERT_GE(click.query_times.front(), std::max(click.times.back(), view.times.back()));
    clicks += click.items.size();
    views += view.items.size();
  }
  EXPECT_GT(clicks, 100u);
  EXPECT_GT(views, 100u);
}

}  // namespace generative_rows_test
}  // namespace tzrec::datagen
