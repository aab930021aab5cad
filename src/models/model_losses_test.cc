// Model losses for num_class > 1 (softmax_cross_entropy, jrc_loss): prediction keys and shapes, loss
// values against plain row-by-row computations, and config / data errors.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/rank/deepfm.h"
#include "models/model.h"
#include "models/testing.h"

namespace tzrec::models {
namespace model_losses_test {

using testing::make_kjt;
using testing::error_of;
using testing::parse_config;

std::vector<feature::FeatureInfo> features() {
  return {testing::sparse_feature("u", 6, 3), testing::sparse_feature("s", 50, 2)};
}

std::shared_ptr<Model> make(const std::string& model_extra, const std::string& data = R"(label_fields: "clk")") {
  return create_model(parse_config(testing::tiny_multi_tower_config(model_extra, data)), features());
}

sparse::Batch batch_of(const std::vector<float>& labels) {
  sparse::Batch batch;
  batch.batch_size = static_cast<int64_t>(labels.size());
  batch.labels["clk"] = torch::tensor(labels);
  std::vector<std::vector<int64_t>> ids;
  for (size_t i = 0; i < labels.size(); ++i) ids.push_back({static_cast<int64_t>(i % 6)});
  batch.sparse_features = make_kjt({"u"}, {ids});
  return batch;
}

// −log softmax(row)[c].
double neg_log_softmax(const std::vector<double>& row, size_t c) {
  double sum = 0;
  for (double z : row) sum += std::exp(z);
  return std::log(sum) - row[c];
}

std::vector<double> row_of(const torch::Tensor& logits, int64_t b) {
  std::vector<double> out;
  for (int64_t c = 0; c < logits.size(1); ++c) out.push_back(logits[b][c].item<double>());
  return out;
}

TEST(ModelLosses, SoftmaxPredictionKeysAndShapes) {
  auto model = make("num_class: 3 losses { softmax_cross_entropy {} }");
  sparse::Batch batch = batch_of({0, 2, 1, 1});
  auto pred = model->predict(batch);
  ASSERT_EQ(pred.size(), 2u);
  EXPECT_EQ(pred.at("logits").sizes(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(pred.at("probs").sizes(), (std::vector<int64_t>{4, 3}));
  EXPECT_TRUE(torch::allclose(pred.at("probs"), torch::softmax(pred.at("logits"), 1)));
  EXPECT_TRUE(torch::allclose(pred.at("probs").sum(1), torch::ones({4})));
  // Gradients reach every parameter through the loss.
  model->loss(pred, batch).at("softmax_cross_entropy").backward();
  for (const auto& [name, p] : model->dense_parameters()) EXPECT_TRUE(p.grad().defined()) << name;

  auto binary = make("num_class: 2 losses { softmax_cross_entropy {} }");
  auto p2 = binary->predict(batch);
  ASSERT_EQ(p2.size(), 3u);
  EXPECT_EQ(p2.at("logits").sizes(), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(p2.at("probs1").sizes(), (std::vector<int64_t>{4}));
  EXPECT_TRUE(torch::allclose(p2.at("probs1"), torch::softmax(p2.at("logits"), 1).select(1, 1)));

  // jrc_loss predicts like softmax_cross_entropy with two classes.
  auto jrc = make("num_class: 2 losses { jrc_loss { session_name: 's' } }");
  auto pj = jrc->predict(batch);
  EXPECT_EQ(pj.size(), 3u);
  EXPECT_EQ(pj.count("probs1"), 1u);
}

TEST(ModelLosses, DeepFmWithThreeClasses) {
  auto config = parse_config(R"(
    data_config { label_fields: "clk" }
    model_config {
      feature_groups { group_name: "wide" feature_names: ["u"] group_type: WIDE }
      feature_groups { group_name: "deep" feature_names: ["u"] }
      deepfm { deep { hidden_units: [4] } }
      num_class: 3
      losses { softmax_cross_entropy {} }
    })");
  auto model = create_model(config, features());
  ASSERT_NE(dynamic_cast<DeepFM*>(model.get()), nullptr);
  auto pred = model->predict(batch_of({0, 1, 2}));
  EXPECT_EQ(pred.at("logits").sizes(), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(pred.count("probs1"), 0u);
}

// Logits [B, 3], labels as the batch stores them (float32 class ids), label smoothing 0.1, sample
// weights: mean_b(CE_b · w_b / mean(w)) with CE_b = 0.9 · (−log p_y) + 0.1 / 3 · Σ_c (−log p_c).
TEST(ModelLosses, SoftmaxLossValueWithSmoothingAndWeights) {
  auto model = make("num_class: 3 losses { softmax_cross_entropy { label_smoothing: 0.1 } }",
                    R"(label_fields: "clk" sample_weight_fields: "w")");
  torch::Tensor logits = torch::tensor({1.0f, 2.0f, 0.5f, 0.2f, -1.0f, 3.0f, 0.0f, 0.0f, 0.0f}).reshape({3, 3});
  sparse::Batch batch = batch_of({1, 2, 0});
  batch.sample_weights["w"] = torch::tensor({1.0f, 2.0f, 3.0f});  // mean 2
  const std::vector<size_t> y = {1, 2, 0};
  const std::vector<double> w = {1, 2, 3};
  double expected = 0;
  for (int64_t b = 0; b < 3; ++b) {
    const auto row = row_of(logits, b);
    double smooth = 0;
    for (size_t c = 0; c < 3; ++c) smooth += neg_log_softmax(row, c);
    const double ce = 0.9 * neg_log_softmax(row, y[b]) + 0.1 / 3 * smooth;
    expected += ce * w[b] / 2.0 / 3.0;
  }
  TensorMap pred{{"logits", logits}, {"probs", torch::softmax(logits, 1)}};
  auto losses = model->loss(pred, batch);
  ASSERT_EQ(losses.size(), 1u);
  EXPECT_NEAR(losses.at("softmax_cross_entropy").item<double>(), expected, 1e-6);
  // The loss metric is the batch-size-weighted mean of the batch losses.
  model->update_metrics(pred, batch, losses);
  EXPECT_NEAR(model->compute_metrics().at("softmax_cross_entropy"), expected, 1e-6);
}

TEST(ModelLosses, SoftmaxBadLabelIsDataError) {
  auto model = make("num_class: 3 losses { softmax_cross_entropy {} }");
  TensorMap pred{{"logits", torch::zeros({3, 3})}};
  for (float bad : {3.0f, -1.0f, 1.5f}) {
    const std::string msg = error_of([&] { model->loss(pred, batch_of({0, bad, 1})); });
    EXPECT_NE(msg.find("label 'clk' row 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find(fmt::format("value {}", static_cast<double>(bad))), std::string::npos) << msg;
    EXPECT_THROW(model->loss(pred, batch_of({0, bad, 1})), DataError);
  }
}

// jrc_loss through the Model: session = first id of feature "s" per row (a row without ids is
// session 0), compared with the plain per-row formula of loss/jrc_loss.h.
TEST(ModelLosses, JrcLossMatchesPlainLoop) {
  auto model = make("num_class: 2 losses { jrc_loss { session_name: 's' alpha: 0.3 } }",
                    R"(label_fields: "clk" sample_weight_fields: "w")");
  const std::vector<float> labels = {1, 0, 0, 1, 1, 0, 1, 0};
  // Rows' ids of "s": first ids 7, 7, 9, 9, 0 (no id), 0 (id 0), 7, 9 (second id ignored).
  const std::vector<std::vector<int64_t>> s_ids = {{7}, {7, 9}, {9}, {9}, {}, {0}, {7}, {9, 7}};
  const std::vector<int64_t> session = {7, 7, 9, 9, 0, 0, 7, 9};
  const std::vector<double> w = {1, 2, 1, 0.5, 1, 3, 1, 0.5};  // mean 1.25
  sparse::Batch batch = batch_of(labels);
  batch.sparse_features = make_kjt({"s"}, {s_ids});
  batch.sample_weights["w"] = torch::tensor(std::vector<float>(w.begin(), w.end()));
  torch::Tensor logits = torch::empty({8, 2});
  for (int64_t b = 0; b < 8; ++b) {
    logits[b][0] = std::cos(0.7 * b) * 1.5;
    logits[b][1] = std::sin(1.1 * b + 0.2) * 2.0;
  }
  double expected = 0;
  for (int64_t b = 0; b < 8; ++b) {
    const auto row = row_of(logits, b);
    const size_t k = labels[b] == 1 ? 1 : 0;
    double denom = std::exp(row[k]);
    for (int64_t j = 0; j < 8; ++j) {
      if (session[j] == session[b] && labels[j] != labels[b]) denom += std::exp(logits[j][k].item<double>());
    }
    const double ge = -std::log(std::exp(row[k]) / denom);
    const double loss_b = 0.3 * neg_log_softmax(row, k) + 0.7 * ge;
    expected += loss_b * (w[b] / 1.25) / 8;
  }
  TensorMap pred{{"logits", logits}};
  EXPECT_NEAR(model->loss(pred, batch).at("jrc_loss").item<double>(), expected, 1e-5);

  // A batch without the session feature: DataError naming the config field and the feature.
  sparse::Batch no_session = batch_of(labels);
  no_session.sample_weights = batch.sample_weights;
  const std::string msg = error_of([&] { model->loss(pred, no_session); });
  EXPECT_NE(msg.find("model_config.losses[0].jrc_loss.session_name 's' is not a sparse feature of the batch"),
            std::string::npos)
      << msg;
  EXPECT_THROW(model->loss(pred, no_session), DataError);
  // Labels must be 0 / 1.
  sparse::Batch bad = batch;
  bad.labels["clk"] = torch::tensor({1.0f, 0.0f, 2.0f, 1.0f, 1.0f, 0.0f, 1.0f, 0.0f});
  EXPECT_THROW(model->loss(pred, bad), DataError);
}

TEST(ModelLosses, ConfigErrors) {
  auto build = [](const std::string& extra) { return error_of([&] { make(extra); }); };
  EXPECT_NE(build("num_class: 1 losses { softmax_cross_entropy {} }")
                .find("model_config.losses[0].softmax_cross_entropy: needs model_config.num_class > 1"),
            std::string::npos);
  EXPECT_THROW(make("losses { softmax_cross_entropy {} }"), ConfigError);
  EXPECT_NE(build("num_class: 3 losses { jrc_loss { session_name: 's' } }")
                .find("model_config.losses[0].jrc_loss: needs model_config.num_class 2, got 3"),
            std::string::npos);
  EXPECT_THROW(make("num_class: 3 losses { jrc_loss { session_name: 's' } }"), ConfigError);
  EXPECT_NE(build("num_class: 2 losses { jrc_loss { session_name: '' } }")
                .find("model_config.losses[0].jrc_loss.session_name: required"),
            std::string::npos);
  EXPECT_NE(build("num_class: 2 losses { jrc_loss { session_name: 's' alpha: 2 } }")
                .find("model_config.losses[0].jrc_loss.alpha: must be in [0, 1]"),
            std::string::npos);
  EXPECT_NE(build("num_class: 3 losses { softmax_cross_entropy { label_smoothing: 2 } }")
                .find("model_config.losses[0].softmax_cross_entropy.label_smoothing: must be in [0, 1]"),
            std::string::npos);
  EXPECT_NE(build("num_class: 2 losses { binary_cross_entropy {} }")
                .find("model_config.num_class: must be 1 with loss binary_cross_entropy, got 2"),
            std::string::npos);
  EXPECT_NE(build("num_class: 3 losses { l2_loss {} }").find("must be 1 with loss l2_loss"), std::string::npos);
  EXPECT_NE(build("num_class: 0 losses { binary_cross_entropy {} }").find("model_config.num_class: must be >= 1"),
            std::string::npos);
  EXPECT_NE(build("num_class: 2 losses { softmax_cross_entropy {} } losses { softmax_cross_entropy {} }")
                .find("configured twice"),
            std::string::npos);
  // Softmax and JRC together: both read "logits" [B, 2].
  auto both = make("num_class: 2 losses { softmax_cross_entropy {} } losses { jrc_loss { session_name: 's' } }");
  sparse::Batch batch = batch_of({1, 0});
  batch.sparse_features = make_kjt({"s"}, {{{1}, {1}}});
  auto losses = both->loss({{"logits", torch::tensor({0.5f, -0.5f, 1.0f, 2.0f}).reshape({2, 2})}}, batch);
  EXPECT_EQ(losses.size(), 2u);
}

}  // namespace model_losses_test
}  // namespace tzrec::models
