// Model train metrics (docs/tzrec-compatibility.md §7.3): the value is 0 until the first
// decay_step updates, then the metric over those updates as-is, then every decay_step updates
// rate · old + (1 − rate) · new (AUC: the confusion matrices are decayed instead).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/model.h"
#include "models/testing.h"

namespace tzrec::models {
namespace model_train_metrics_test {

using testing::parse_config;

std::shared_ptr<Model> make(const std::string& model_extra) {
  return create_model(parse_config(testing::tiny_multi_tower_config(model_extra)),
                      {testing::sparse_feature("u", 6, 3)});
}

sparse::Batch labels(const std::vector<float>& y) {
  sparse::Batch batch;
  batch.batch_size = static_cast<int64_t>(y.size());
  batch.labels["clk"] = torch::tensor(y);
  return batch;
}

TEST(ModelTrainMetrics, MseDecaysEveryDecayStep) {
  auto model = make("losses { l2_loss {} } train_metrics { mean_squared_error {} decay_rate: 0.25 decay_step: 2 }");
  ASSERT_TRUE(model->has_train_metrics());
  // Step k: predictions [k, 0], labels [0, 0] → squared errors k², 0.
  auto step = [&](int k) {
    model->update_train_metrics({{"y", torch::tensor({static_cast<float>(k), 0.0f})}}, labels({0, 0}));
    return model->compute_train_metrics().at("mean_squared_error");
  };
  EXPECT_EQ(step(1), 0.0);                             // before the first decay_step updates
  const double first = (1.0 + 4.0) / 4;                // steps 1, 2: MSE over their 4 rows
  EXPECT_DOUBLE_EQ(step(2), first);                    // first value as-is
  EXPECT_DOUBLE_EQ(step(3), first);                    // unchanged between refreshes
  const double second = 0.25 * first + 0.75 * (9.0 + 16.0) / 4;
  EXPECT_DOUBLE_EQ(step(4), second);
  step(5);
  EXPECT_DOUBLE_EQ(step(6), 0.25 * second + 0.75 * (25.0 + 36.0) / 4);
  auto all = model->compute_train_metrics();
  EXPECT_EQ(all.size(), 1u);
  model->reset_train_metrics();
  EXPECT_EQ(model->compute_train_metrics().at("mean_squared_error"), 0.0);
}

// auc on "probs1" (num_class 2). Batch 1: positives 0.9, negatives 0.1 (AUC 1). Batch 2: the
// reverse. Decayed confusion counts: 0.25 · batch 1 + 0.75 · batch 2 → ROC points (0, 0),
// (FPR 0.75, TPR 0.25), (1, 1) → area 0.75 · 0.25 / 2 + 0.25 · 1.25 / 2 = 0.25.
TEST(ModelTrainMetrics, AucDecaysConfusionMatrices) {
  auto model =
      make("num_class: 2 losses { softmax_cross_entropy {} } train_metrics { auc {} decay_rate: 0.25 decay_step: 1 }");
  auto probs = [](const std::vector<float>& p1) {
    torch::Tensor p = torch::tensor(p1);
    return TensorMap{{"probs1", p}, {"probs", torch::stack({1 - p, p}, 1)}};
  };
  model->update_train_metrics(probs({0.9f, 0.1f, 0.9f, 0.1f}), labels({1, 0, 1, 0}));
  EXPECT_NEAR(model->compute_train_metrics().at("auc"), 1.0, 1e-12);
  model->update_train_metrics(probs({0.1f, 0.9f, 0.1f, 0.9f}), labels({1, 0, 1, 0}));
  EXPECT_NEAR(model->compute_train_metrics().at("auc"), 0.25, 1e-12);
}

// Multiclass top-1 accuracy (num_class 3): batch 1 all right (1.0), batch 2 half right (0.5):
// 0.25 · 1.0 + 0.75 · 0.5 = 0.625. Binary accuracy on "probs" for num_class 1 alongside.
TEST(ModelTrainMetrics, AccuracyBinaryAndMulticlass) {
  auto multi = make("num_class: 3 losses { softmax_cross_entropy {} } "
                    "train_metrics { accuracy {} decay_rate: 0.25 decay_step: 1 }");
  torch::Tensor p = torch::tensor({0.7f, 0.2f, 0.1f, 0.1f, 0.1f, 0.8f}).reshape({2, 3});
  multi->update_train_metrics({{"probs", p}}, labels({0, 2}));
  EXPECT_DOUBLE_EQ(multi->compute_train_metrics().at("accuracy"), 1.0);
  multi->update_train_metrics({{"probs", p}}, labels({0, 1}));
  EXPECT_DOUBLE_EQ(multi->compute_train_metrics().at("accuracy"), 0.625);

  auto binary = make("losses { binary_cross_entropy {} } train_metrics { accuracy { threshold: 0.6 } decay_step: 1 } "
                     "train_metrics { auc {} decay_step: 1 }");
  binary->update_train_metrics({{"probs", torch::tensor({0.65f, 0.55f, 0.2f})}}, labels({1, 1, 0}));
  auto m = binary->compute_train_metrics();
  ASSERT_EQ(m.size(), 2u);
  EXPECT_NEAR(m.at("accuracy"), 2.0 / 3, 1e-12);  // 0.55 is below the threshold
  EXPECT_NEAR(m.at("auc"), 1.0, 1e-12);
}

TEST(ModelTrainMetrics, XaucOnY) {
  auto model = make("losses { l2_loss {} } train_metrics { xauc { sample_ratio: 1.0 } decay_step: 1 }");
  // Pairs of [1, 2, 3] vs targets [1, 3, 2]: (0,1) and (0,2) concordant, (1,2) not → 2/3.
  model->update_train_metrics({{"y", torch::tensor({1.0f, 2.0f, 3.0f})}}, labels({1, 3, 2}));
  EXPECT_NEAR(model->compute_train_metrics().at("xauc"), 2.0 / 3, 1e-12);
}

TEST(ModelTrainMetrics, NoneAndErrors) {
  auto none = make("losses { binary_cross_entropy {} } metrics { auc {} }");
  EXPECT_FALSE(none->has_train_metrics());
  none->update_train_metrics({{"probs", torch::zeros({1})}}, labels({1}));
  EXPECT_TRUE(none->compute_train_metrics().empty());

  auto error_of = [](const std::string& extra) {
    try {
      make(extra);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_THROW(make("losses { binary_cross_entropy {} } train_metrics { recall_at_k {} }"), NotSupportedError);
  EXPECT_NE(error_of("losses { binary_cross_entropy {} } train_metrics { recall_at_k {} }")
                .find("model_config.train_metrics[0].recall_at_k: needs a match model's similarity output"),
            std::string::npos);
  EXPECT_NE(error_of("losses { binary_cross_entropy {} } train_metrics { auc {} decay_rate: 2 }")
                .find("model_config.train_metrics[0].decay_rate: must be in [0, 1]"),
            std::string::npos);
  EXPECT_NE(error_of("losses { binary_cross_entropy {} } train_metrics { auc {} decay_step: 0 }")
                .find("model_config.train_metrics[0].decay_step: must be >= 1"),
            std::string::npos);
  EXPECT_NE(error_of("losses { binary_cross_entropy {} } train_metrics { mean_absolute_error {} }")
                .find("model_config.train_metrics[0].mean_absolute_error: needs the regression prediction 'y'"),
            std::string::npos);
  EXPECT_NE(error_of("num_class: 3 losses { softmax_cross_entropy {} } train_metrics { auc {} }")
                .find("model_config.train_metrics[0].auc: needs a binary prediction"),
            std::string::npos);
  EXPECT_NE(error_of("losses { binary_cross_entropy {} } train_metrics { auc {} } train_metrics { auc {} }")
                .find("configured twice"),
            std::string::npos);
  EXPECT_NE(error_of("losses { binary_cross_entropy {} } train_metrics { }").find("no metric set"), std::string::npos);
}

}  // namespace model_train_metrics_test
}  // namespace tzrec::models
