#include "models/model.h"

#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "models/rank/deepfm.h"
#include "models/rank/multi_tower.h"
#include "models/testing.h"

namespace tzrec::models {
namespace model_test {

using testing::make_kjt;
using testing::parse_config;

std::string config_text(const std::string& losses, const std::string& metrics,
                        const std::string& data = R"(label_fields: "clk")") {
  return "data_config { " + data + R"( }
    model_config {
      feature_groups { group_name: "user" feature_names: ["u"] }
      multi_tower { towers { input: "user" mlp { hidden_units: [2] } } final { hidden_units: [2] } }
      )" + losses + "\n" + metrics + "\n}";
}

std::vector<feature::FeatureInfo> features() { return {testing::sparse_feature("u", 6, 3)}; }

sparse::Batch label_batch(const std::vector<float>& labels) {
  sparse::Batch batch;
  batch.batch_size = static_cast<int64_t>(labels.size());
  batch.labels["clk"] = torch::tensor(labels);
  return batch;
}

TEST(Model, CreateModelDispatchesOnOneof) {
  auto deepfm = parse_config(R"(
    data_config { label_fields: "clk" }
    model_config {
      feature_groups { group_name: "wide" feature_names: ["u"] group_type: WIDE }
      feature_groups { group_name: "deep" feature_names: ["u"] }
      deepfm { deep { hidden_units: [2] } }
      losses { binary_cross_entropy {} }
    })");
  auto m1 = create_model(deepfm, features());
  EXPECT_NE(dynamic_cast<DeepFM*>(m1.get()), nullptr);
  auto m2 = create_model(parse_config(config_text("losses { binary_cross_entropy {} }", "")), features());
  EXPECT_NE(dynamic_cast<MultiTower*>(m2.get()), nullptr);
  EXPECT_EQ(m2->label_name(), "clk");

  auto refused = parse_config(R"(model_config { simple_multi_task { } })");
  try {
    create_model(refused, features());
    ADD_FAILURE();
  } catch (const NotSupportedError& e) {
    EXPECT_STREQ(e.what(), "not supported yet: model_config.simple_multi_task");
  }
  EXPECT_THROW(create_model(parse_config(R"(model_config { })"), features()), ConfigError);
  EXPECT_THROW(create_model(parse_config(""), features()), ConfigError);
  // No label field.
  EXPECT_THROW(create_model(parse_config(config_text("losses { binary_cross_entropy {} }", "", "")), features()),
               ConfigError);
}

TEST(Model, PredictKeysAndShapes) {
  auto model = create_model(parse_config(config_text("losses { binary_cross_entropy {} }", "")), features());
  sparse::Batch batch = label_batch({1, 0, 1});
  batch.sparse_features = make_kjt({"u"}, {{{1}, {2, 3}, {}}});
  auto pred = model->predict(batch);
  ASSERT_EQ(pred.size(), 2u);
  EXPECT_EQ(pred.at("logits").sizes(), (std::vector<int64_t>{3}));
  EXPECT_EQ(pred.at("probs").sizes(), (std::vector<int64_t>{3}));
  EXPECT_EQ(pred.at("logits").scalar_type(), torch::kFloat32);
  // Gradients reach both the dense and the sparse parameters.
  auto losses = model->loss(pred, batch);
  losses.at("binary_cross_entropy").backward();
  for (const auto& [name, p] : model->dense_parameters()) EXPECT_TRUE(p.grad().defined()) << name;
  auto tables = model->embedding_tables();
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].name, "u_emb");
}

// logits [0.5, -1, 2, 0], labels [1, 0, 0, 1], weights [1, 2, 0, 1], label_smoothing 0.2:
// 0.5109368849441245 from /usr/bin/python3 torch 1.13:
//   mean(BCEWithLogitsLoss(reduction="none")(l, y * 0.8 + 0.1) * (w / w.mean())).
TEST(Model, LossWithLabelSmoothingAndSampleWeights) {
  auto config = parse_config(config_text("losses { binary_cross_entropy { label_smoothing: 0.2 } }", "",
                                         R"(label_fields: ["clk", "buy"] sample_weight_fields: "w")"));
  auto model = create_model(config, features());
  sparse::Batch batch = label_batch({1, 0, 0, 1});
  batch.labels["buy"] = torch::tensor({0.0f, 0.0f, 0.0f, 0.0f});  // second label is not used
  batch.sample_weights["w"] = torch::tensor({1.0f, 2.0f, 0.0f, 1.0f});
  TensorMap pred{{"logits", torch::tensor({0.5f, -1.0f, 2.0f, 0.0f})}};
  auto losses = model->loss(pred, batch);
  ASSERT_EQ(losses.size(), 1u);
  EXPECT_NEAR(losses.at("binary_cross_entropy").item<double>(), 0.5109368849441245, 1e-6);

  // Without sample weights: 0.8893534658253119 (plain mean, same smoothing).
  auto plain = create_model(
      parse_config(config_text("losses { binary_cross_entropy { label_smoothing: 0.2 } }", "")), features());
  EXPECT_NEAR(plain->loss(pred, batch).at("binary_cross_entropy").item<double>(), 0.8893534658253119, 1e-6);

  sparse::Batch no_weight = label_batch({1, 0, 0, 1});
  try {
    model->loss(pred, no_weight);
    ADD_FAILURE();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("sample weight 'w'"), std::string::npos) << e.what();
  }
  sparse::Batch no_label;
  EXPECT_THROW(plain->loss(pred, no_label), DataError);
}

// Metrics through the Model API on the shared sklearn reference ("random_1000_seed20240601", 1000 rows)
// split into batches: exact AUC = sklearn; loss metric = batch-size-weighted mean of batch losses.
TEST(Model, MetricsThroughModelApi) {
  std::ifstream in(TZREC_SOURCE_DIR "/tests/data/metrics/metric_reference.json");
  ASSERT_TRUE(in.good());
  auto ref = nlohmann::json::parse(in);
  const nlohmann::json* c = nullptr;
  for (const auto& x : ref["cases"]) {
    if (x["name"] == "random_1000_seed20240601") c = &x;
  }
  ASSERT_NE(c, nullptr);
  auto preds = torch::tensor((*c)["preds"].get<std::vector<double>>(), torch::kFloat32);
  auto labels = torch::tensor((*c)["labels"].get<std::vector<double>>(), torch::kFloat32);

  for (bool explicit_thresholds : {false, true}) {
    auto model = create_model(
        parse_config(config_text("losses { binary_cross_entropy {} }",
                                 explicit_thresholds ? "metrics { auc { thresholds: 200 } }" : "metrics { auc {} }")),
        features());
    double weighted_loss_sum = 0.0;
    int64_t start = 0;
    for (int64_t size : {100, 250, 7, 643}) {
      sparse::Batch batch;
      batch.batch_size = size;
      batch.labels["clk"] = labels.slice(0, start, start + size);
      auto p = preds.slice(0, start, start + size);
      TensorMap pred{{"logits", torch::log(p / (1 - p))}, {"probs", p}};
      auto losses = model->loss(pred, batch);
      weighted_loss_sum += losses.at("binary_cross_entropy").item<double>() * size;
      model->update_metrics(pred, batch, losses);
      start += size;
    }
    ASSERT_EQ(start, 1000);
    auto m = model->compute_metrics();
    EXPECT_NEAR(m.at("auc"), (*c)["auc"].get<double>(), 1e-6);
    // The batch-size-weighted mean of batch BCE equals the log loss over all rows.
    EXPECT_NEAR(m.at("binary_cross_entropy"), weighted_loss_sum / 1000, 1e-9);
    EXPECT_NEAR(m.at("binary_cross_entropy"), (*c)["logloss"].get<double>(), 1e-5);
    if (explicit_thresholds) {
      ASSERT_EQ(m.size(), 3u);
      // torchmetrics BinaryAUROC(thresholds=200), see src/metrics/auc_binned_reference.py.
      EXPECT_NEAR(m.at("auc_binned"), 0.8482452630996704, 1e-7);
    } else {
      EXPECT_EQ(m.size(), 2u);
    }
    model->reset_metrics();
    auto empty = model->compute_metrics();
    EXPECT_EQ(empty.at("auc"), 0.0);
    EXPECT_TRUE(std::isnan(empty.at("binary_cross_entropy")));
  }
}

TEST(Model, UnsupportedMetricAndLoss) {
  try {
    create_model(parse_config(config_text("losses { l2_loss {} }", R"(metrics { recall_at_k {} })")), features());
    ADD_FAILURE();
  } catch (const NotSupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("not supported yet: model_config.metrics[0].recall_at_k"), std::string::npos);
  }
  EXPECT_THROW(create_model(parse_config(config_text("losses { recon_loss {} }", "")), features()),
               ConfigError);  // a SID model's loss
  // Metrics need the prediction their loss produces: MAE / MSE read "y" (l2_loss), the others "probs".
  EXPECT_THROW(create_model(parse_config(config_text("losses { binary_cross_entropy {} }",
                                                     "metrics { mean_absolute_error {} }")),
                            features()),
               ConfigError);
  EXPECT_THROW(create_model(parse_config(config_text("losses { l2_loss {} }", "metrics { auc {} }")), features()),
               ConfigError);
  EXPECT_THROW(create_model(parse_config(config_text("losses { binary_focal_loss { alpha: 2 } }", "")), features()),
               ConfigError);
  EXPECT_THROW(create_model(parse_config(config_text("losses { binary_cross_entropy {} }",
                                                     "metrics { accuracy { threshold: 1.5 } }")),
                            features()),
               ConfigError);
  EXPECT_THROW(create_model(parse_config(config_text("", "")), features()), ConfigError);  // no loss
  EXPECT_THROW(create_model(parse_config(config_text("losses { binary_cross_entropy { label_smoothing: 2 } }", "")),
                            features()),
               ConfigError);
  EXPECT_THROW(create_model(parse_config(config_text("losses { binary_cross_entropy {} } num_class: 2", "")),
                            features()),
               ConfigError);
  EXPECT_THROW(create_model(parse_config(config_text("losses { binary_cross_entropy {} }",
                                                     "metrics { auc { thresholds: 1 } }")),
                            features()),
               ConfigError);
}

// l2_loss: prediction "y" = raw output; loss = MSE; MAE / MSE metrics on y vs sklearn
// (mean_absolute_error 1.6951428571428568, mean_squared_error 5.194933714285712 on these values).
TEST(Model, L2LossRegressionMetrics) {
  auto model = create_model(parse_config(config_text("losses { l2_loss {} }",
                                                     "metrics { mean_absolute_error {} } "
                                                     "metrics { mean_squared_error {} }")),
                            features());
  sparse::Batch b = label_batch({1, 0, 1});
  b.sparse_features = make_kjt({"u"}, {{{1}, {2, 3}, {}}});
  auto pred = model->predict(b);
  ASSERT_EQ(pred.size(), 1u);
  ASSERT_EQ(pred.count("y"), 1u);
  EXPECT_EQ(pred.at("y").sizes(), (std::vector<int64_t>{3}));

  auto p = torch::tensor({4.536, 1.301, 2.049, 2.611, 0.817, 2.003, 1.999}, torch::kFloat32);
  auto y = torch::tensor({-0.632, 3.526, 2.901, 1.062, 1.743, 2.758, 1.608}, torch::kFloat32);
  double weighted = 0;
  for (auto [lo, hi] : {std::pair<int64_t, int64_t>{0, 3}, {3, 7}}) {
    sparse::Batch batch;
    batch.batch_size = hi - lo;
    batch.labels["clk"] = y.slice(0, lo, hi);
    TensorMap pr{{"y", p.slice(0, lo, hi)}};
    auto losses = model->loss(pr, batch);
    weighted += losses.at("l2_loss").item<double>() * (hi - lo);
    model->update_metrics(pr, batch, losses);
  }
  auto m = model->compute_metrics();
  ASSERT_EQ(m.size(), 3u);
  EXPECT_NEAR(m.at("mean_absolute_error"), 1.6951428571428568, 1e-5);
  EXPECT_NEAR(m.at("mean_squared_error"), 5.1949337142857122, 1e-5);
  // Mean of the batch MSEs weighted by batch size = MSE over all rows.
  EXPECT_NEAR(m.at("l2_loss"), 5.1949337142857122, 1e-5);
  EXPECT_NEAR(m.at("l2_loss"), weighted / 7, 1e-9);
}

// binary_focal_loss through the Model with sample weights: /usr/bin/python3 torch 1.13 (float64),
// x = [-1.5, 0.3, 2.0, -0.2, 0.9], y = [0, 1, 1, 0, 0], w = [1, 2, 0.5, 3, 1.5], gamma 1.5, alpha 0.25:
// mean(BCE(x, y, weight=focal, reduction="none") * w / w.mean()) = 0.166609458701344.
TEST(Model, BinaryFocalLossWithSampleWeights) {
  auto model = create_model(
      parse_config(config_text("losses { binary_focal_loss { gamma: 1.5 alpha: 0.25 } }", "metrics { auc {} }",
                               R"(label_fields: "clk" sample_weight_fields: "w")")),
      features());
  sparse::Batch batch = label_batch({0, 1, 1, 0, 0});
  batch.sample_weights["w"] = torch::tensor({1.0f, 2.0f, 0.5f, 3.0f, 1.5f});
  TensorMap pred{{"logits", torch::tensor({-1.5f, 0.3f, 2.0f, -0.2f, 0.9f})}};
  auto losses = model->loss(pred, batch);
  ASSERT_EQ(losses.size(), 1u);
  EXPECT_NEAR(losses.at("binary_focal_loss").item<double>(), 0.166609458701344, 1e-6);
  batch.sparse_features = make_kjt({"u"}, {{{1}, {2}, {3}, {4}, {5}}});
  auto p = model->predict(batch);
  EXPECT_EQ(p.size(), 2u);
  EXPECT_TRUE(torch::allclose(p.at("probs"), torch::sigmoid(p.at("logits"))));
}

// accuracy, normalized_entropy and grouped_auc through the Model API on the sklearn reference cases;
// the grouping key is the first id of sparse feature "u" in each batch.
TEST(Model, ProbMetricsThroughModelApi) {
  std::ifstream in(TZREC_SOURCE_DIR "/tests/data/metrics/metric_reference.json");
  ASSERT_TRUE(in.good());
  auto ref = nlohmann::json::parse(in);
  const auto& c = ref["cases"][5];
  ASSERT_EQ(c["name"], "random_1000_seed20240601");
  auto preds = torch::tensor(c["preds"].get<std::vector<double>>(), torch::kFloat32);
  auto labels = torch::tensor(c["labels"].get<std::vector<double>>(), torch::kFloat32);
  auto groups = c["groups"].get<std::vector<int64_t>>();
  auto model = create_model(parse_config(config_text("losses { binary_cross_entropy {} }",
                                                     R"(metrics { accuracy {} } metrics { normalized_entropy {} }
                                                        metrics { grouped_auc { grouping_key: "u" } })")),
                            features());
  int64_t start = 0;
  for (int64_t size : {300, 1, 699}) {
    sparse::Batch batch;
    batch.batch_size = size;
    batch.labels["clk"] = labels.slice(0, start, start + size);
    // Row r has ids [group, 7]: only the first id is the group.
    std::vector<std::vector<int64_t>> rows;
    for (int64_t r = start; r < start + size; ++r) rows.push_back({groups[r], 7});
    batch.sparse_features = make_kjt({"u"}, {rows});
    auto p = preds.slice(0, start, start + size);
    TensorMap pred{{"logits", torch::log(p / (1 - p))}, {"probs", p}};
    model->update_metrics(pred, batch, model->loss(pred, batch));
    start += size;
  }
  auto m = model->compute_metrics();
  ASSERT_EQ(m.size(), 4u);
  EXPECT_NEAR(m.at("accuracy"), 0.727, 1e-12);                       // sklearn accuracy_score(y, p > 0.5)
  EXPECT_NEAR(m.at("normalized_entropy"), 0.68612443339435469, 1e-6);  // sklearn log_loss / H(mean y)
  EXPECT_NEAR(m.at("grouped_auc"), c["gauc_unweighted_mean_over_mixed_groups"].get<double>(), 1e-9);

  // A batch without the grouping feature is a DataError naming it.
  sparse::Batch bad = label_batch({1, 0});
  TensorMap pred{{"logits", torch::zeros({2})}, {"probs", torch::full({2}, 0.5f)}};
  try {
    model->update_metrics(pred, bad, {});
    ADD_FAILURE();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("grouping_key 'u'"), std::string::npos) << e.what();
  }
}

// Rows with no id for the grouping feature form group 0 (tzrec: to_padded_dense(1)[:, 0]).
TEST(Model, GroupedAucEmptyRowsAreGroupZero) {
  auto model = create_model(parse_config(config_text("losses { binary_cross_entropy {} }",
                                                     R"(metrics { grouped_auc { grouping_key: "u" } })")),
                            features());
  sparse::Batch batch = label_batch({1, 0, 0, 1, 0, 1});
  // Rows 0, 1, 3 → groups 5, 0, 5; rows 2, 4, 5 have no id → group 0 together with row 1.
  batch.sparse_features = make_kjt({"u"}, {{{5}, {0}, {}, {5, 2}, {}, {}}});
  auto probs = torch::tensor({0.9f, 0.3f, 0.6f, 0.2f, 0.1f, 0.7f});
  TensorMap pred{{"logits", torch::log(probs / (1 - probs))}, {"probs", probs}};
  model->update_metrics(pred, batch, {});
  // Group 5: labels [1, 1] → skipped. Group 0: probs [0.3, 0.6, 0.1, 0.7], labels [0, 0, 0, 1] → AUC 1.
  EXPECT_NEAR(model->compute_metrics().at("grouped_auc"), 1.0, 1e-12);
  // Group 0 with row 4 relabelled positive: pos {0.1, 0.7} vs neg {0.3, 0.6} → 2 of 4 pairs = 0.5.
  model->reset_metrics();
  batch.labels["clk"] = torch::tensor({1.0f, 0.0f, 0.0f, 1.0f, 1.0f, 1.0f});
  model->update_metrics(pred, batch, {});
  EXPECT_NEAR(model->compute_metrics().at("grouped_auc"), 0.5, 1e-12);
}

}  // namespace model_test
}  // namespace tzrec::models
