#include "observe/training_summaries.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "data/testing_util.h"
#include "observe/tensorboard_writer.h"

namespace tzrec::observe {
namespace training_summaries_test {

namespace fs = std::filesystem;

using data::testing::TempDir;

protos::TrainConfig config_with(const std::vector<std::string>& summaries) {
  protos::TrainConfig config;
  for (const auto& s : summaries) config.add_tensorboard_summaries(s);
  return config;
}

// Every summary value of the file by tag (each tag is written once per test), with its step.
struct Written {
  std::map<std::string, TensorBoardValue> values;
  std::map<std::string, int64_t> steps;
  std::set<std::string> tags() const {
    std::set<std::string> out;
    for (const auto& [tag, v] : values) out.insert(tag);
    return out;
  }
};

Written read_back(const std::string& path) {
  Written out;
  for (const auto& event : read_tensorboard_events(path)) {
    for (const auto& value : event.values) {
      EXPECT_EQ(out.values.count(value.tag), 0u) << "tag written twice: " << value.tag;
      out.values[value.tag] = value;
      out.steps[value.tag] = event.step;
    }
  }
  return out;
}

double bucket_total(const TensorBoardHistogram& h) {
  double total = 0;
  for (double c : h.bucket) total += c;
  return total;
}

// A dense parameter with the given values and gradient (none when `grad` is empty).
torch::Tensor param(std::vector<float> values, std::vector<int64_t> shape, std::vector<float> grad = {}) {
  auto p = torch::tensor(values).reshape(shape).set_requires_grad(true);
  if (!grad.empty()) p.mutable_grad() = torch::tensor(grad).reshape(shape);
  return p;
}

TEST(TrainingSummaries, WritesTorchEasyRecTagsHistogramsAndNorms) {
  TempDir dir;
  std::string path;
  {
    TensorBoardWriter writer(dir.path());
    path = writer.path();
    TrainingSummaries summaries(
        config_with({"parameter", "gradient", "gradient_norm", "global_gradient_norm"}), &writer);
    EXPECT_TRUE(summaries.wants_parameters());
    EXPECT_TRUE(summaries.wants_gradients());
    const NamedTensors dense = {
        {"deep.w", param({1, -2, 3, 0.5}, {2, 2}, {0.1f, -0.2f, 0.3f, 0.4f})},
        {"deep.b", param({-1, 2, 4}, {3}, {3, 4, 0})},
        {"frozen", param({7, 8}, {2})},  // no gradient
    };
    summaries.write_gradients(dense, 100);
    summaries.write_parameters(dense, 100);
    summaries.write_table_parameters({{"ebc.t0.weight", torch::arange(12, torch::kFloat).reshape({4, 3})}},
                                     /*rank=*/0, 100);
  }
  const Written written = read_back(path);
  const std::set<std::string> expected_tags = {
      "model.deep.w", "model.deep.b", "model.frozen", "model.ebc.t0.weight/rank:0",
      "model.deep.w/gradient", "model.deep.b/gradient",
      "model.deep.w/gradient_norm", "model.deep.b/gradient_norm", "global_gradient_norm"};
  EXPECT_EQ(written.tags(), expected_tags);
  for (const auto& [tag, step] : written.steps) EXPECT_EQ(step, 100) << tag;

  // Parameter histogram of deep.w: values 1, -2, 3, 0.5.
  const auto& w = written.values.at("model.deep.w").histo.value();
  EXPECT_EQ(w.num, 4);
  EXPECT_EQ(w.min, -2);
  EXPECT_EQ(w.max, 3);
  EXPECT_DOUBLE_EQ(w.sum, 2.5);
  EXPECT_DOUBLE_EQ(w.sum_squares, 1 + 4 + 9 + 0.25);
  EXPECT_EQ(bucket_total(w), 4);
  EXPECT_FALSE(written.values.at("model.deep.w").simple_value.has_value());

  // Table histogram: 0..11.
  const auto& t = written.values.at("model.ebc.t0.weight/rank:0").histo.value();
  EXPECT_EQ(t.num, 12);
  EXPECT_EQ(t.min, 0);
  EXPECT_EQ(t.max, 11);
  EXPECT_DOUBLE_EQ(t.sum, 66);

  // Gradient histogram of deep.b: 3, 4, 0.
  const auto& gb = written.values.at("model.deep.b/gradient").histo.value();
  EXPECT_EQ(gb.num, 3);
  EXPECT_EQ(gb.min, 0);
  EXPECT_EQ(gb.max, 4);
  EXPECT_DOUBLE_EQ(gb.sum, 7);
  EXPECT_DOUBLE_EQ(gb.sum_squares, 25);
  const auto& gw = written.values.at("model.deep.w/gradient").histo.value();
  EXPECT_EQ(gw.num, 4);
  EXPECT_FLOAT_EQ(gw.min, -0.2f);
  EXPECT_FLOAT_EQ(gw.max, 0.4f);

  // Norms by hand: |grad w| = sqrt(0.01 + 0.04 + 0.09 + 0.16), |grad b| = 5,
  // global = sqrt(0.30 + 25).
  EXPECT_FLOAT_EQ(*written.values.at("model.deep.w/gradient_norm").simple_value,
                  static_cast<float>(std::sqrt(0.30)));
  EXPECT_FLOAT_EQ(*written.values.at("model.deep.b/gradient_norm").simple_value, 5.0f);
  EXPECT_FLOAT_EQ(*written.values.at("global_gradient_norm").simple_value,
                  static_cast<float>(std::sqrt(25.30)));
}

TEST(TrainingSummaries, WritesOnlyWhatIsAsked) {
  TempDir dir;
  std::string path;
  {
    TensorBoardWriter writer(dir.path());
    path = writer.path();
    TrainingSummaries summaries(config_with({"global_gradient_norm"}), &writer);
    EXPECT_FALSE(summaries.wants_parameters());
    EXPECT_TRUE(summaries.wants_gradients());
    // TorchEasyRec always adds loss and learning_rate to a non-empty list.
    EXPECT_TRUE(summaries.wants("loss"));
    EXPECT_TRUE(summaries.wants("learning_rate"));
    const NamedTensors dense = {{"a", param({1, 2}, {2}, {6, 8})}};
    summaries.write_parameters(dense, 7);
    summaries.write_table_parameters({{"t", torch::ones({2, 2})}}, 0, 7);
    summaries.write_gradients(dense, 7);
  }
  const Written written = read_back(path);
  EXPECT_EQ(written.tags(), std::set<std::string>{"global_gradient_norm"});
  EXPECT_FLOAT_EQ(*written.values.at("global_gradient_norm").simple_value, 10.0f);
  EXPECT_EQ(written.steps.at("global_gradient_norm"), 7);
}

TEST(TrainingSummaries, DefaultsAndNoWriter) {
  TempDir dir;
  std::string path;
  {
    TensorBoardWriter writer(dir.path());
    path = writer.path();
    TrainingSummaries defaults(config_with({}), &writer);
    EXPECT_TRUE(defaults.wants("loss"));
    EXPECT_TRUE(defaults.wants("learning_rate"));
    EXPECT_FALSE(defaults.wants("parameter"));
    EXPECT_FALSE(defaults.wants_gradients());
    const NamedTensors dense = {{"a", param({1, 2}, {2}, {6, 8})}};
    defaults.write_parameters(dense, 1);
    defaults.write_gradients(dense, 1);
  }
  EXPECT_TRUE(read_back(path).values.empty());

  // No writer (TensorBoard off or not rank 0): nothing is wanted, writes are no-ops.
  TrainingSummaries off(config_with({"parameter", "gradient"}), nullptr);
  EXPECT_FALSE(off.wants("loss"));
  EXPECT_FALSE(off.wants_parameters());
  EXPECT_FALSE(off.wants_gradients());
  off.write_parameters({{"a", param({1}, {1}, {1})}}, 1);
  off.write_gradients({{"a", param({1}, {1}, {1})}}, 1);
}

TEST(TrainingSummaries, NoGradientsMeansNoGlobalNormAndNonFiniteHistogramIsSkipped) {
  TempDir dir;
  std::string path;
  {
    TensorBoardWriter writer(dir.path());
    path = writer.path();
    TrainingSummaries summaries(config_with({"parameter", "global_gradient_norm"}), &writer);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const NamedTensors dense = {{"diverged", param({nan, nan}, {2})},
                                {"empty", torch::zeros({0})},
                                {"ok", param({0.25f}, {1})}};
    EXPECT_NO_THROW(summaries.write_gradients(dense, 3));
    EXPECT_NO_THROW(summaries.write_parameters(dense, 3));
    EXPECT_NO_THROW(summaries.write_parameters(dense, 4));  // warned once, still skipped
  }
  const auto events = read_tensorboard_events(path);
  std::multiset<std::string> tags;
  for (const auto& e : events) {
    for (const auto& v : e.values) tags.insert(v.tag);
  }
  EXPECT_EQ(tags, (std::multiset<std::string>{"model.ok", "model.ok"}));
}

TEST(TrainingSummaries, DoubleAndHalfTensorsAreBucketed) {
  TempDir dir;
  std::string path;
  {
    TensorBoardWriter writer(dir.path());
    path = writer.path();
    TrainingSummaries summaries(config_with({"parameter"}), &writer);
    summaries.write_parameters({{"d", torch::tensor({0.5, 1.5}, torch::kDouble)},
                                {"h", torch::tensor({-1.0f, 2.0f}).to(torch::kHalf)}},
                               9);
  }
  const Written written = read_back(path);
  EXPECT_DOUBLE_EQ(written.values.at("model.d").histo->sum, 2.0);
  EXPECT_DOUBLE_EQ(written.values.at("model.h").histo->sum, 1.0);
  EXPECT_EQ(written.values.at("model.h").histo->min, -1.0);
}

}  // namespace training_summaries_test
}  // namespace tzrec::observe
