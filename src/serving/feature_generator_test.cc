// tzrec/fg.h (serving/feature_generator.cc). Expected values are computed by hand from the rules of
// docs/tzrec-compatibility.md §5.4 - §5.8 (num_buckets ids are the integers themselves, boundaries
// [18, 25, 30] put 20 in bucket 1 and 40 in bucket 3, FG_NORMAL histories keep their first
// sequence_length items, an empty history is one item of default "0", a vocab_file's ids are its
// line numbers).
#include "tzrec/fg.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace tzrec::serving {
namespace feature_generator_test {

namespace fs = std::filesystem;

class FeatureGeneratorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tzrec_fg_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  fs::path dir_;
};

const char* kConfig = R"(
  data_config { fg_mode: FG_NORMAL label_fields: "clk" }
  feature_configs { id_feature { feature_name: "cat" expression: "user:cat" num_buckets: 10 embedding_dim: 4 } }
  feature_configs { raw_feature { feature_name: "age" expression: "user:age" boundaries: [18, 25, 30]
                                  embedding_dim: 4 } }
  feature_configs { raw_feature { feature_name: "price" expression: "item:price" } }
  feature_configs { sequence_id_feature { feature_name: "clicks" expression: "user:clicks" sequence_delim: ";"
                                          sequence_length: 3 num_buckets: 10 embedding_dim: 4 } }
  model_config { feature_groups { group_name: "all" feature_names: ["cat", "age", "price"] }
                 deepfm { deep { hidden_units: [4] } } losses { binary_cross_entropy {} } })";

TEST_F(FeatureGeneratorTest, FromAPipelineConfig) {
  const FeatureGenerator fg(write("pipeline.config", kConfig));
  EXPECT_EQ(fg.input_names(), (std::vector<std::string>{"cat", "age", "price", "clicks"}));
  // Inputs the features do not read (here "extra") are allowed; labels are not needed.
  const FgOutput out = fg.generate({{"clicks", {"1;2;3;4", ""}},
                                    {"cat", {"3\x1d" "7", ""}},
                                    {"age", {"20", "40"}},
                                    {"price", {"2.5", ""}},
                                    {"extra", {"x", "y"}}});
  ASSERT_EQ(out.rows, 2);
  ASSERT_EQ(out.features.size(), 4u);
  const FgFeatureOutput& cat = *out.find("cat");
  EXPECT_TRUE(cat.sparse);
  EXPECT_EQ(cat.ids, (std::vector<int64_t>{3, 7}));
  EXPECT_EQ(cat.lengths, (std::vector<int64_t>{2, 0}));
  EXPECT_TRUE(cat.weights.empty());
  const FgFeatureOutput& age = *out.find("age");
  EXPECT_EQ(age.ids, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(age.lengths, (std::vector<int64_t>{1, 1}));
  const FgFeatureOutput& price = *out.find("price");
  EXPECT_FALSE(price.sparse);
  EXPECT_EQ(price.value_dim, 1);
  EXPECT_EQ(price.values, (std::vector<float>{2.5f, 0.0f}));
  const FgFeatureOutput& clicks = *out.find("clicks");
  EXPECT_TRUE(clicks.sequence);
  EXPECT_EQ(clicks.ids, (std::vector<int64_t>{1, 2, 3, 0}));
  EXPECT_EQ(clicks.sequence_lengths, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(clicks.lengths, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(out.find("nope"), nullptr);
}

TEST_F(FeatureGeneratorTest, ConcurrentCallsAgree) {
  const FeatureGenerator fg(write("pipeline.config", kConfig));
  const std::vector<FgInput> in = {{"cat", {"1", "2", "3"}}, {"age", {"1", "19", "31"}},
                                   {"price", {"1", "2", "3"}}, {"clicks", {"1", "2;3", ""}}};
  const FgOutput expected = fg.generate(in);
  std::vector<FgOutput> got(4);
  std::vector<std::thread> threads;
  for (auto& g : got) threads.emplace_back([&] { g = fg.generate(in); });
  for (auto& t : threads) t.join();
  for (const FgOutput& g : got) {
    ASSERT_EQ(g.features.size(), expected.features.size());
    for (size_t i = 0; i < g.features.size(); ++i) {
      EXPECT_EQ(g.features[i].ids, expected.features[i].ids);
      EXPECT_EQ(g.features[i].values, expected.features[i].values);
    }
  }
}

// An export directory: its pipeline.config names vocab files relative to asset_dir, which is where
// the package was written; the generator reads them from wherever the package is now.
TEST_F(FeatureGeneratorTest, FromAMovedExportDirectory) {
  write("export/pipeline.config", R"(
    data_config { fg_mode: FG_DAG label_fields: "clk" }
    feature_configs { id_feature { feature_name: "tag" expression: "item:tag" vocab_file: "tags_0123.txt"
                                   asset_dir: "/where/it/was/exported" default_bucketize_value: 0 embedding_dim: 4 } }
    model_config { feature_groups { group_name: "all" feature_names: ["tag"] }
                   deepfm { deep { hidden_units: [4] } } losses { binary_cross_entropy {} } })");
  write("export/tags_0123.txt", "red\ngreen\nblue\n");
  const FeatureGenerator fg((dir_ / "export").string());
  const FgOutput out = fg.generate({{"tag", {"blue", "green\x1dred", "violet"}}});
  const FgFeatureOutput& tag = *out.find("tag");
  EXPECT_EQ(tag.ids, (std::vector<int64_t>{2, 1, 0, 0}));  // violet: default_bucketize_value 0
  EXPECT_EQ(tag.lengths, (std::vector<int64_t>{1, 2, 1}));
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST_F(FeatureGeneratorTest, Errors) {
  const FeatureGenerator fg(write("pipeline.config", kConfig));
  EXPECT_NE(error_of([&] { fg.generate({{"cat", {"1"}}, {"age", {"1"}}, {"price", {"1"}}}); })
                .find("request: input 'clicks' is missing; the features read cat, age, price, clicks"),
            std::string::npos);
  EXPECT_NE(error_of([&] { fg.generate({{"cat", {"1", "2"}}, {"age", {"1"}}, {"price", {"1"}}, {"clicks", {""}}}); })
                .find("request: input 'age' has 1 cells but 'cat' has 2"),
            std::string::npos);
  // A bad value names the request row (0-based) and the feature.
  const std::string bad =
      error_of([&] { fg.generate({{"cat", {"1", "12"}}, {"age", {"1", "2"}}, {"price", {"1", "2"}}, {"clicks", {"", ""}}}); });
  EXPECT_NE(bad.find("request row 1"), std::string::npos) << bad;
  EXPECT_NE(bad.find("cat"), std::string::npos) << bad;
  fs::create_directories(dir_ / "empty");
  EXPECT_NE(error_of([&] { FeatureGenerator((dir_ / "empty").string()); }).find("is a directory without pipeline.config"),
            std::string::npos);
  // Refused config fields are refused here as in training.
  const std::string refused = error_of([&] {
    FeatureGenerator(write("refused.config", R"(
      data_config { fg_mode: FG_NORMAL }
      feature_configs { kv_dot_product { feature_name: "z" query: "user:q" document: "item:d" kv_delimiter: 1 } })"));
  });
  EXPECT_NE(refused.find("not supported yet: feature_configs[0].kv_dot_product.kv_delimiter"), std::string::npos) << refused;
}

}  // namespace feature_generator_test
}  // namespace tzrec::serving
