#include "feature/batch_loader.h"

#include <gtest/gtest.h>

#include <set>

#include "base/error.h"
#include "data/testing_util.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"

namespace tzrec::feature {
namespace batch_loader_test {

using testing::error_of;
using testing::Floats;
using testing::floats_of;
using testing::Ids;
using testing::ids_of;

using data::testing::TempDir;
using testing::parse_config;


TEST(BatchLoader, TinyHandCheckedCsv) {
  auto config = parse_config(R"(
    data_config { batch_size: 3 dataset_type: CsvDataset with_header: true num_workers: 4
                  label_fields: "clk" sample_weight_fields: "w" fg_encoded_multival_sep: "|" }
    feature_configs { id_feature { feature_name: "cat_a" embedding_dim: 4 num_buckets: 10 } }
    feature_configs { id_feature { feature_name: "cat_b" embedding_dim: 4 hash_bucket_size: 100 weighted: true } }
    feature_configs { raw_feature { feature_name: "price" } }
    feature_configs { raw_feature { feature_name: "emb" value_dim: 2 } }
    feature_configs { raw_feature { feature_name: "rb" boundaries: [1, 2, 3] embedding_dim: 4 } }
  )");
  BatchLoader loader(config, data::testing::fixture("tests/data/csv/tiny_fg_none.csv"),
                     Mode::kTrain);
  EXPECT_EQ(loader.num_workers(), 1);  // one file
  auto lb = loader.next();
  ASSERT_TRUE(lb);
  const sparse::Batch& b = lb->batch;
  EXPECT_EQ(b.batch_size, 3);
  EXPECT_EQ(b.sparse_features.keys(), (std::vector<std::string>{"cat_a", "cat_b", "rb"}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{2, 0, 1, 1, 2, 0, 1, 1, 0}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 3, 9, 5, 7, 2, 0, 3}));
  EXPECT_EQ(floats_of(b.sparse_features.weights()), (Floats{1, 1, 1, 0.5f, 1.5f, 2, 1, 1}));
  EXPECT_EQ(b.dense_features.keys(), (std::vector<std::string>{"price", "emb"}));
  EXPECT_EQ(floats_of(b.dense_features.values()), (Floats{1.5f, 1, 2, 2, 3, 4, -3, 5, 6}));
  EXPECT_EQ(floats_of(b.labels.at("clk")), (Floats{1, 0, 1}));
  EXPECT_EQ(floats_of(b.sample_weights.at("w")), (Floats{0.5f, 1, 2}));
  EXPECT_EQ(lb->position.total_rows(), 3);
  EXPECT_FALSE(loader.next());
}

TEST(BatchLoader, FgModeWithoutHeaderCustomDelimiter) {
  TempDir dir;
  const std::string path = dir.write("in.tsv", "1\tabc\t0.1\n0\tzzz\t\n1\t\t0.3\n");
  auto config = parse_config(R"(
    data_config { batch_size: 8 dataset_type: CsvDataset delimiter: "\t" fg_mode: FG_DAG
                  input_fields { input_name: "label" } input_fields { input_name: "tag" }
                  input_fields { input_name: "score" } label_fields: "label" }
    feature_configs { id_feature { feature_name: "tag_id" expression: "item:tag" embedding_dim: 4
                                   vocab_list: ["abc", "efg"] } }
    feature_configs { raw_feature { feature_name: "score_b" expression: "item:score"
                                    boundaries: [0.05, 0.15, 0.25] embedding_dim: 4 } }
  )");
  BatchLoader loader(config, path, Mode::kEval);
  auto lb = loader.next();
  ASSERT_TRUE(lb);
  EXPECT_EQ(ids_of(lb->batch.sparse_features.values()), (Ids{2, 1, 1, 0, 3}));
  EXPECT_EQ(ids_of(lb->batch.sparse_features.lengths()), (Ids{1, 1, 0, 1, 1, 1}));
  EXPECT_EQ(floats_of(lb->batch.labels.at("label")), (Floats{1, 0, 1}));
  EXPECT_FALSE(loader.next());
}

// 5 CSV files (7, 0, 12, 3, 9 rows) with header "id,lbl"; id = global row number (a num_buckets
// id), lbl = id * 0.5.
struct Dataset {
  TempDir dir;
  std::vector<std::string> files;
  int64_t total = 0;
  explicit Dataset(const std::vector<int>& sizes = {7, 0, 12, 3, 9}) {
    for (size_t f = 0; f < sizes.size(); ++f) {
      std::string text = "id,lbl\n";
      for (int i = 0; i < sizes[f]; ++i, ++total) {
        text += std::to_string(total) + "," + std::to_string(total * 0.5) + "\n";
      }
      files.push_back(dir.write("part-" + std::to_string(f) + ".csv", text));
    }
  }
  std::string glob() const { return dir.path() + "/part-*.csv"; }
};

protos::EasyRecConfig loader_config(int num_workers, int batch_size,
                                    const std::string& extra = "") {
  return parse_config(R"(
    data_config { dataset_type: CsvDataset with_header: true label_fields: "lbl" batch_size: )" +
                      std::to_string(batch_size) + " num_workers: " + std::to_string(num_workers) +
                      " " + extra + R"( }
    feature_configs { id_feature { feature_name: "id" embedding_dim: 4 num_buckets: 1000 } })");
}

std::vector<Ids> drain(BatchLoader& l, std::vector<data::ReadPosition>* positions = nullptr) {
  std::vector<Ids> out;
  while (auto lb = l.next()) {
    Ids ids = ids_of(lb->batch.sparse_features.values());
    // Labels travel with their rows.
    Floats lbl = floats_of(lb->batch.labels.at("lbl"));
    for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(lbl[i], ids[i] * 0.5f);
    out.push_back(ids);
    if (positions) positions->push_back(lb->position);
  }
  return out;
}

TEST(BatchLoader, WorkerSplitEveryRowOnceDeterministicOrder) {
  Dataset d;
  for (int workers : {0, 1, 2, 3, 4, 8}) {
    BatchLoader a(loader_config(workers, 4), d.glob(), Mode::kTrain);
    EXPECT_EQ(a.num_workers(), std::min(std::max(workers, 1), 5));
    auto first = drain(a);
    BatchLoader again(loader_config(workers, 4), d.glob(), Mode::kTrain);
    EXPECT_EQ(drain(again), first) << workers;
    std::multiset<int64_t> seen;
    for (auto& b : first) seen.insert(b.begin(), b.end());
    EXPECT_EQ(seen.size(), static_cast<size_t>(d.total)) << workers;
    EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), static_cast<size_t>(d.total));
  }
  // 2 workers: worker 0 reads files 0, 2, 4; worker 1 files 1, 3 (TorchEasyRec files[w::n]).
  BatchLoader two(loader_config(2, 4), d.glob(), Mode::kTrain);
  EXPECT_EQ(drain(two), (std::vector<Ids>{{0, 1, 2, 3},
                                          {19, 20, 21},
                                          {4, 5, 6, 7},
                                          {8, 9, 10, 11},
                                          {12, 13, 14, 15},
                                          {16, 17, 18, 22},
                                          {23, 24, 25, 26},
                                          {27, 28, 29, 30}}));
}

TEST(BatchLoader, ResumeGivesExactlyTheRemainingBatches) {
  Dataset d;
  for (int workers = 1; workers <= 4; ++workers) {
    std::vector<data::ReadPosition> positions;
    BatchLoader full(loader_config(workers, 3), d.glob(), Mode::kTrain);
    auto all = drain(full, &positions);
    for (size_t k = 0; k < all.size(); ++k) {
      auto pos =
          data::ReadPosition::from_json(nlohmann::json::parse(positions[k].to_json().dump()));
      BatchLoader rest(loader_config(workers, 3), d.glob(), Mode::kTrain, &pos);
      EXPECT_EQ(drain(rest), std::vector<Ids>(all.begin() + static_cast<long>(k) + 1, all.end()))
          << workers << " workers, after batch " << k;
    }
  }
  // Other worker count: every remaining row once.
  std::vector<data::ReadPosition> positions;
  BatchLoader full(loader_config(3, 3), d.glob(), Mode::kTrain);
  auto all = drain(full, &positions);
  std::multiset<int64_t> seen;
  for (size_t i = 0; i <= 4; ++i) seen.insert(all[i].begin(), all[i].end());
  BatchLoader rest(loader_config(2, 3), d.glob(), Mode::kTrain, &positions[4]);
  for (auto& b : drain(rest)) seen.insert(b.begin(), b.end());
  EXPECT_EQ(seen.size(), static_cast<size_t>(d.total));
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), static_cast<size_t>(d.total));
  // A position for other files is refused.
  Dataset other({2, 2, 2, 2, 2});
  std::string msg = error_of<DataError>(
      [&] { BatchLoader l(loader_config(3, 3), other.glob(), Mode::kTrain, &positions[4]); });
  EXPECT_NE(msg.find("cannot resume: input file 0 is"), std::string::npos) << msg;
}

TEST(BatchLoader, EvalBatchSizeAndTrainOnlyDropRemainder) {
  Dataset d({10});
  const std::string extra = "eval_batch_size: 4 drop_remainder: true";
  BatchLoader train(loader_config(1, 3, extra), d.glob(), Mode::kTrain);
  auto t = drain(train);
  EXPECT_EQ(t.size(), 3u);  // 3+3+3, the last row dropped
  EXPECT_EQ(t.back(), (Ids{6, 7, 8}));
  BatchLoader eval(loader_config(1, 3, extra), d.glob(), Mode::kEval);
  auto e = drain(eval);
  ASSERT_EQ(e.size(), 3u);  // 4+4+2, all rows kept
  EXPECT_EQ(e.back(), (Ids{8, 9}));
}

TEST(BatchLoader, DestroyMidStreamDoesNotHang) {
  Dataset d({200, 150, 90, 300});
  for (int workers = 1; workers <= 4; ++workers) {
    {
      BatchLoader l(loader_config(workers, 1), d.glob(), Mode::kTrain);
      ASSERT_TRUE(l.next());
      ASSERT_TRUE(l.next());
    }
    BatchLoader never_read(loader_config(workers, 2), d.glob(), Mode::kTrain);
  }
}

TEST(BatchLoader, WorkerErrorsSurfaceFromNext) {
  // Out-of-range id in the second file (worker 1): the first batch of worker 0 arrives first.
  TempDir dir;
  dir.write("a.csv", "id,lbl\n1,0.5\n2,1\n");
  const std::string bad = dir.write("b.csv", "id,lbl\n3,1.5\n1000,2\n");
  BatchLoader l(loader_config(2, 2), dir.path() + "/*.csv", Mode::kTrain);
  ASSERT_TRUE(l.next());
  EXPECT_EQ(error_of<DataError>([&] { l.next(); }),
            bad +
                " line 3 column id: id 1000 out of range [0, 1000) for feature id (num_buckets "
                "1000); fix the data or raise num_buckets");
  EXPECT_THROW(l.next(), DataError);  // stays failed

  // Header without a needed column.
  TempDir dir2;
  const std::string no_lbl = dir2.write("x.csv", "id\n1\n");
  BatchLoader l2(loader_config(1, 2), no_lbl, Mode::kTrain);
  std::string msg = error_of<DataError>([&] { l2.next(); });
  EXPECT_NE(msg.find(no_lbl + ": column 'lbl' is needed"), std::string::npos) << msg;
  // Wrong column count.
  const std::string ragged = dir2.write("y.csv", "id,lbl\n1,2\n3\n");
  BatchLoader l3(loader_config(1, 8), ragged, Mode::kTrain);
  EXPECT_EQ(error_of<DataError>([&] {
              l3.next();
            }).rfind(ragged + " line 3: expected 2 columns, got 1", 0),
            0u);
}

TEST(BatchLoader, ConstructorErrors) {
  Dataset d({1});
  std::string msg = error_of<DataError>(
      [&] { BatchLoader l(loader_config(1, 2), d.dir.path() + "/nothing-*.csv", Mode::kTrain); });
  EXPECT_NE(msg.find("input pattern '" + d.dir.path() + "/nothing-*.csv' matches no files"),
            std::string::npos)
      << msg;
  msg = error_of<DataError>([&] {
    BatchLoader l(loader_config(1, 2), d.files[0] + "," + d.dir.path() + "/gone.csv", Mode::kTrain);
  });
  EXPECT_NE(msg.find("input file '" + d.dir.path() + "/gone.csv' does not exist"),
            std::string::npos)
      << msg;
  msg = error_of<ConfigError>(
      [&] { BatchLoader l(loader_config(1, 2, "delimiter: \"::\""), d.glob(), Mode::kTrain); });
  EXPECT_NE(msg.find("data_config.delimiter: must be exactly one character"), std::string::npos)
      << msg;
  msg = error_of<NotSupportedError>([&] {
    auto c = loader_config(1, 2);
    c.mutable_data_config()->set_dataset_type(protos::OdpsDataset);
    BatchLoader l(c, d.glob(), Mode::kTrain);
  });
  EXPECT_NE(msg.find("data_config.dataset_type OdpsDataset"), std::string::npos) << msg;
  msg = error_of<DataError>([&] {
    auto c = loader_config(1, 2);
    c.mutable_data_config()->set_dataset_type(protos::ParquetDataset);
    BatchLoader l(c, d.files[0], Mode::kTrain);
  });
  EXPECT_NE(msg.find(d.files[0] + "': not a Parquet file"), std::string::npos) << msg;
  msg = error_of<ConfigError>([&] {
    auto c = loader_config(1, 2);
    c.mutable_data_config()->set_with_header(false);
    BatchLoader l(c, d.glob(), Mode::kTrain);
  });
  EXPECT_NE(msg.find("data_config.input_fields"), std::string::npos) << msg;
}

}  // namespace batch_loader_test
}  // namespace tzrec::feature
