#include "train/pooling_factors.h"

#include <gtest/gtest.h>

#include "data/testing_util.h"
#include "dist/testing_multiprocess.h"
#include "feature/testing_config.h"

namespace tzrec::train {
namespace pooling_factors_test {

using data::testing::TempDir;

// Features a and b share table "shared"; c has its own. Multi-valued cells use "|".
protos::EasyRecConfig config_for(const std::string& input, int batch_size) {
  auto config = feature::testing::parse_config(R"(
    data_config { dataset_type: CsvDataset with_header: true num_workers: 1 label_fields: "clk"
                  fg_encoded_multival_sep: "|" }
    feature_configs { id_feature { feature_name: "a" embedding_name: "shared" embedding_dim: 4 num_buckets: 10 } }
    feature_configs { id_feature { feature_name: "b" embedding_name: "shared" embedding_dim: 4 num_buckets: 10 } }
    feature_configs { id_feature { feature_name: "c" embedding_dim: 4 num_buckets: 10 } }
  )");
  config.set_train_input_path(input);
  config.mutable_data_config()->set_batch_size(batch_size);
  return config;
}

const std::vector<embedding::BagConfig> kBags = {{"a", "shared"}, {"b", "shared"}, {"c", "c_emb"}};

// ids per row:            a  b  c
const char* kRows =
    "clk,a,b,c\n"
    "1,1|2|3,4,5\n"      // 3  1  1
    "0,,7|8,1\n"         // 0  2  1
    "1,2,,3|4|5|6\n"     // 1  0  4
    "0,9|1,2,\n"         // 2  1  0
    "1,3,3,3\n"          // 1  1  1
    "0,4|5|6|7|8,1,2\n";  // 5  1  1

TEST(PoolingFactors, MeanIdsPerSampleOfTheFirstBatchesPerTable) {
  TempDir dir;
  const std::string path = dir.write("t.csv", kRows);
  // One batch of 4 rows: shared (6 + 4) / 4, c 6 / 4.
  auto first = measure_pooling_factors(config_for(path, 4), kBags, nullptr, 1);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_DOUBLE_EQ(first.at("shared"), 2.5);
  EXPECT_DOUBLE_EQ(first.at("c_emb"), 1.5);
  // Every row (two batches): shared (12 + 6) / 6, c 8 / 6.
  auto all = measure_pooling_factors(config_for(path, 4), kBags, nullptr, 4);
  EXPECT_DOUBLE_EQ(all.at("shared"), 3.0);
  EXPECT_DOUBLE_EQ(all.at("c_emb"), 8.0 / 6.0);

  std::vector<dist::PlannerTable> tables(3);
  tables[0].name = "shared";
  tables[1].name = "c_emb";
  tables[2].name = "other";
  apply_pooling_factors(all, &tables);
  EXPECT_DOUBLE_EQ(tables[0].pooling_factor, 3.0);
  EXPECT_TRUE(tables[0].pooling_measured);
  EXPECT_DOUBLE_EQ(tables[2].pooling_factor, 1.0);  // not measured: the estimate stays
  EXPECT_FALSE(tables[2].pooling_measured);
}

TEST(PoolingFactors, NoInputOrUnreadableInputKeepsEstimates) {
  TempDir dir;
  EXPECT_TRUE(measure_pooling_factors(config_for("", 4), kBags, nullptr).empty());
  EXPECT_TRUE(measure_pooling_factors(config_for(dir.file("missing.csv"), 4), kBags, nullptr).empty());
  const std::string bad = dir.write("bad.csv", "clk,a,b,c\n1,x,1,1\n");  // 'x' is not an id
  EXPECT_TRUE(measure_pooling_factors(config_for(bad, 4), kBags, nullptr).empty());
  const std::string empty = dir.write("empty.csv", "clk,a,b,c\n");
  EXPECT_TRUE(measure_pooling_factors(config_for(empty, 4), kBags, nullptr).empty());
  // A Kafka stream is not read ahead of training (no broker is contacted: this one does not exist).
  auto kafka = config_for("kafka://127.0.0.1:1/clicks?group.id=g", 4);
  kafka.mutable_data_config()->set_dataset_type(protos::KafkaDataset);
  EXPECT_TRUE(measure_pooling_factors(kafka, kBags, nullptr).empty());
}

// Two ranks, each reading its own file: both get the figures over both files' rows, equal to one
// process reading both.
TEST(PoolingFactors, RanksAgreeOnTheFiguresOverAllRanks) {
  auto statuses = dist::testing::run_ranks(2, [](dist::ProcessGroup& pg) {
    TempDir dir;
    dir.write("in/part-0.csv", "clk,a,b,c\n1,1|2|3,4,5\n0,,7|8,1\n");
    dir.write("in/part-1.csv", "clk,a,b,c\n1,2,,3|4|5|6\n0,9|1,2,\n1,3,3,3\n");
    const auto config = config_for(dir.file("in/*.csv"), 4);
    auto ranks = measure_pooling_factors(config, kBags, &pg);
    auto single = measure_pooling_factors(config, kBags, nullptr);
    ASSERT_EQ(ranks.size(), 2u);
    // shared: (3+0+1+2+1) + (1+2+0+1+1) = 12 ids over 5 rows; c: 1+1+4+0+1 = 7.
    EXPECT_DOUBLE_EQ(ranks.at("shared"), 12.0 / 5.0);
    EXPECT_DOUBLE_EQ(ranks.at("c_emb"), 7.0 / 5.0);
    EXPECT_EQ(ranks, single);
  });
  dist::testing::expect_all_succeeded(statuses);
}

// One rank cannot read its data: no rank uses measured figures, and none hangs.
TEST(PoolingFactors, ARankWithBadDataMakesEveryRankUseEstimates) {
  auto statuses = dist::testing::run_ranks(2, [](dist::ProcessGroup& pg) {
    TempDir dir;
    dir.write("in/part-0.csv", "clk,a,b,c\n1,1|2|3,4,5\n");
    dir.write("in/part-1.csv", "clk,a,b,c\n1,x,1,1\n");
    EXPECT_TRUE(measure_pooling_factors(config_for(dir.file("in/*.csv"), 4), kBags, &pg).empty());
  });
  dist::testing::expect_all_succeeded(statuses);
}

}  // namespace pooling_factors_test
}  // namespace tzrec::train
