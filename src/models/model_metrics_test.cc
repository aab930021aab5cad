// Model eval metrics for num_class 2 / 3 and regression (multiclass_auc, multiclass accuracy, auc /
// grouped_auc / normalized_entropy / accuracy on two classes, xauc, grouped_xauc): values against
// sklearn constants or plain loops, config errors, and Model::sync_metrics across 2 ranks.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "dist/process_group.h"
#include "dist/testing_multiprocess.h"
#include "models/model.h"
#include "models/testing.h"

namespace tzrec::models {
namespace model_metrics_test {

using testing::make_kjt;
using testing::error_of;
using testing::parse_config;

std::shared_ptr<Model> make(const std::string& model_extra) {
  return create_model(parse_config(testing::tiny_multi_tower_config(model_extra)),
                      {testing::sparse_feature("u", 6, 3), testing::sparse_feature("g", 10, 2)});
}

constexpr int64_t kRows = 12;

// Logits row i, class c: float32(sin(1.3 i + 0.1 c²) · 2 + 0.3 c) — the same values as the python
// reference below.
torch::Tensor logits_of(int64_t num_class) {
  torch::Tensor out = torch::empty({kRows, num_class});
  for (int64_t i = 0; i < kRows; ++i) {
    for (int64_t c = 0; c < num_class; ++c) {
      out[i][c] = static_cast<float>(std::sin(1.3 * i + 0.1 * c * c) * 2 + 0.3 * c);
    }
  }
  return out;
}
// y3 = (i² + i / 5) % 3; y2 = 1 if i·5 % 3 == 0 or i % 4 == 1; group g = i % 3.
std::vector<float> labels3() {
  std::vector<float> y;
  for (int64_t i = 0; i < kRows; ++i) y.push_back(static_cast<float>((i * i + i / 5) % 3));
  return y;
}
std::vector<float> labels2() {
  std::vector<float> y;
  for (int64_t i = 0; i < kRows; ++i) y.push_back(((i * 5) % 3 == 0 || i % 4 == 1) ? 1.0F : 0.0F);
  return y;
}

// Predictions as the Model makes them from logits [B, C].
TensorMap softmax_predictions(const torch::Tensor& logits) {
  TensorMap pred{{"logits", logits}, {"probs", torch::softmax(logits, 1)}};
  if (logits.size(1) == 2) pred["probs1"] = pred["probs"].select(1, 1);
  return pred;
}

TensorMap rows(const TensorMap& pred, int64_t begin, int64_t end) {
  TensorMap out;
  for (const auto& [k, v] : pred) out[k] = v.slice(0, begin, end);
  return out;
}

// Batch of rows [begin, end): labels and group feature "g" = [i % 3, 9].
sparse::Batch batch_rows(const std::vector<float>& labels, int64_t begin, int64_t end) {
  sparse::Batch batch;
  batch.batch_size = end - begin;
  batch.labels["clk"] = torch::tensor(std::vector<float>(labels.begin() + begin, labels.begin() + end));
  std::vector<std::vector<int64_t>> g;
  for (int64_t i = begin; i < end; ++i) g.push_back({i % 3, 9});
  batch.sparse_features = make_kjt({"g"}, {g});
  return batch;
}

// /usr/bin/python3 (numpy, torch 1.13, sklearn), with logits / y3 / y2 / g as above:
//   p3 = torch.softmax(torch.tensor(logits3), 1).numpy()
//   roc_auc_score(y3, p3, multi_class='ovr', average='macro')    = 0.4227072310405644
//   roc_auc_score(y3, p3, multi_class='ovr', average='weighted') = 0.42923280423280424
//   top_k_accuracy_score(y3, p3, k=2, labels=[0, 1, 2])          = 0.5833333333333334
//   p1 = torch.softmax(torch.tensor(logits3[:, :2]), 1)[:, 1]
//   roc_auc_score(y2, p1) = 0.75; accuracy_score(y2, p2.argmax(1)) = 0.5
//   log_loss(y2, p1) / H(mean(y2)) = 0.9811240295480946
//   mean(roc_auc_score(y2[g == k], p1[g == k]) for groups with both labels) = 0.6666666666666667
TEST(ModelMetrics, ThreeClasses) {
  for (const char* average : {"macro", "weighted"}) {
    auto model = make(std::string("num_class: 3 losses { softmax_cross_entropy {} } ") +
                      "metrics { multiclass_auc { thresholds: 0 average: '" + average + "' } } " +
                      "metrics { accuracy { top_k: 2 } }");
    const auto pred = softmax_predictions(logits_of(3));
    const auto y = labels3();
    for (auto [b, e] : {std::pair<int64_t, int64_t>{0, 5}, {5, kRows}}) {
      auto batch = batch_rows(y, b, e);
      model->update_metrics(rows(pred, b, e), batch, model->loss(rows(pred, b, e), batch));
    }
    auto m = model->compute_metrics();
    ASSERT_EQ(m.size(), 3u);  // + the loss
    EXPECT_NEAR(m.at("multiclass_auc"), std::string(average) == "macro" ? 0.4227072310405644 : 0.42923280423280424,
                1e-6)
        << average;
    EXPECT_NEAR(m.at("accuracy"), 0.5833333333333334, 1e-12);
    EXPECT_TRUE(std::isfinite(m.at("softmax_cross_entropy")));
  }
  // Default thresholds (200): tzrec's binned form, close to the exact value on these 12 rows.
  auto binned = make("num_class: 3 losses { softmax_cross_entropy {} } metrics { multiclass_auc {} }");
  const auto pred = softmax_predictions(logits_of(3));
  binned->update_metrics(pred, batch_rows(labels3(), 0, kRows), {});
  EXPECT_NEAR(binned->compute_metrics().at("multiclass_auc"), 0.4227072310405644, 0.02);
}

TEST(ModelMetrics, TwoClassesReadProbs1) {
  for (const char* loss : {"softmax_cross_entropy {}", "jrc_loss { session_name: 'g' }"}) {
    auto model = make(std::string("num_class: 2 losses { ") + loss + " } metrics { auc {} } metrics { accuracy {} } " +
                      "metrics { normalized_entropy {} } metrics { grouped_auc { grouping_key: 'g' } }");
    const auto pred = softmax_predictions(logits_of(2));
    const auto y = labels2();
    for (auto [b, e] : {std::pair<int64_t, int64_t>{0, 7}, {7, kRows}}) {
      auto batch = batch_rows(y, b, e);
      model->update_metrics(rows(pred, b, e), batch, model->loss(rows(pred, b, e), batch));
    }
    auto m = model->compute_metrics();
    ASSERT_EQ(m.size(), 5u) << loss;
    EXPECT_NEAR(m.at("auc"), 0.75, 1e-12) << loss;
    EXPECT_NEAR(m.at("accuracy"), 0.5, 1e-12) << loss;
    EXPECT_NEAR(m.at("normalized_entropy"), 0.9811240295480946, 1e-5) << loss;
    EXPECT_NEAR(m.at("grouped_auc"), 0.6666666666666667, 1e-12) << loss;
  }
}

// Concordant pairs / all pairs, counted row by row (ties count in the denominator only).
double plain_xauc(const std::vector<double>& p, const std::vector<double>& t) {
  double good = 0, all = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    for (size_t j = i + 1; j < p.size(); ++j) {
      all += 1;
      if ((t[i] - t[j]) * (p[i] - p[j]) > 0) good += 1;
    }
  }
  return good / all;
}

TEST(ModelMetrics, XaucAndGroupedXaucOnY) {
  auto model = make("losses { l2_loss {} } metrics { xauc { sample_ratio: 1.0 } } "
                    "metrics { grouped_xauc { grouping_key: 'g' } } metrics { mean_absolute_error {} }");
  std::vector<double> p, t;
  for (int64_t i = 0; i < kRows; ++i) {
    p.push_back(static_cast<float>(std::sin(0.9 * i) * 3));
    t.push_back(static_cast<float>((i * 7) % 5) * 0.5);
  }
  torch::Tensor y = torch::tensor(p, torch::kFloat32);
  std::vector<float> targets(t.begin(), t.end());
  for (auto [b, e] : {std::pair<int64_t, int64_t>{0, 4}, {4, kRows}}) {
    auto batch = batch_rows(targets, b, e);
    TensorMap pred{{"y", y.slice(0, b, e)}};
    model->update_metrics(pred, batch, model->loss(pred, batch));
  }
  auto m = model->compute_metrics();
  ASSERT_EQ(m.size(), 4u);
  EXPECT_NEAR(m.at("xauc"), plain_xauc(p, t), 1e-12);
  // Groups i % 3 (4 rows each, 6 pairs ≤ 100: exact), weighted by group size.
  double weighted = 0;
  for (int64_t g = 0; g < 3; ++g) {
    std::vector<double> gp, gt;
    for (int64_t i = g; i < kRows; i += 3) {
      gp.push_back(p[i]);
      gt.push_back(t[i]);
    }
    weighted += plain_xauc(gp, gt) * 4 / 12.0;
  }
  EXPECT_NEAR(m.at("grouped_xauc"), weighted, 1e-12);
  // A batch without the grouping feature names it.
  sparse::Batch no_group;
  no_group.labels["clk"] = torch::zeros({2});
  const std::string msg = error_of([&] { model->update_metrics({{"y", torch::zeros({2})}}, no_group, {}); });
  EXPECT_NE(msg.find("grouped_xauc: grouping_key 'g' is not a sparse feature"), std::string::npos) << msg;
}

TEST(ModelMetrics, ConfigErrors) {
  auto build = [](const std::string& extra) { return error_of([&] { make(extra); }); };
  const std::string recall = build("losses { binary_cross_entropy {} } metrics { recall_at_k {} }");
  EXPECT_NE(recall.find("not supported yet: model_config.metrics[0].recall_at_k: needs a match model's similarity"),
            std::string::npos)
      << recall;
  EXPECT_THROW(make("losses { binary_cross_entropy {} } metrics { recall_at_k {} }"), NotSupportedError);
  EXPECT_NE(build("losses { binary_cross_entropy {} } metrics { multiclass_auc {} }")
                .find("model_config.metrics[0].multiclass_auc: needs num_class > 1"),
            std::string::npos);
  EXPECT_NE(build("num_class: 3 losses { softmax_cross_entropy {} } metrics { auc {} }")
                .find("model_config.metrics[0].auc: needs a binary prediction (num_class 1 or 2), got num_class 3"),
            std::string::npos);
  EXPECT_THROW(make("num_class: 3 losses { softmax_cross_entropy {} } metrics { grouped_auc { grouping_key: 'g' } }"),
               ConfigError);
  EXPECT_THROW(make("num_class: 3 losses { softmax_cross_entropy {} } metrics { normalized_entropy {} }"),
               ConfigError);
  EXPECT_NE(build("num_class: 3 losses { softmax_cross_entropy {} } metrics { mean_squared_error {} }")
                .find("needs the regression prediction 'y'"),
            std::string::npos);
  EXPECT_NE(build("num_class: 3 losses { softmax_cross_entropy {} } metrics { multiclass_auc { average: 'none' } }")
                .find("model_config.metrics[0].multiclass_auc.average: must be \"macro\" or \"weighted\""),
            std::string::npos);
  EXPECT_NE(build("num_class: 3 losses { softmax_cross_entropy {} } metrics { multiclass_auc { thresholds: 1 } }")
                .find("model_config.metrics[0].multiclass_auc.thresholds"),
            std::string::npos);
  EXPECT_NE(build("num_class: 3 losses { softmax_cross_entropy {} } metrics { accuracy { top_k: 4 } }")
                .find("model_config.metrics[0].accuracy.top_k: must be in [1, num_class = 3], got 4"),
            std::string::npos);
  EXPECT_NE(build("losses { binary_cross_entropy {} } metrics { xauc {} }").find("add losses { l2_loss {} }"),
            std::string::npos);
  EXPECT_NE(build("losses { l2_loss {} } metrics { xauc { sample_ratio: 0 } }")
                .find("model_config.metrics[0].xauc.sample_ratio: must be in (0, 1]"),
            std::string::npos);
  EXPECT_NE(build("losses { l2_loss {} } metrics { grouped_xauc { grouping_key: '' } }")
                .find("model_config.metrics[0].grouped_xauc.grouping_key: must name a sparse feature"),
            std::string::npos);
}

// Two ranks each see half of the rows; after Model::sync_metrics every rank's compute_metrics()
// equals one model that saw every row.
TEST(ModelMetrics, SyncMetricsAcrossRanks) {
  auto statuses = dist::testing::run_ranks(2, [](dist::ProcessGroup& pg) {
    const std::vector<std::string> configs = {
        "num_class: 3 losses { softmax_cross_entropy {} } metrics { multiclass_auc {} } "
        "metrics { accuracy { top_k: 2 } }",
        "num_class: 2 losses { jrc_loss { session_name: 'g' } } metrics { auc {} } metrics { accuracy {} } "
        "metrics { normalized_entropy {} } metrics { grouped_auc { grouping_key: 'g' } }",
        "losses { l2_loss {} } metrics { xauc {} } metrics { grouped_xauc { grouping_key: 'g' } } "
        "metrics { mean_squared_error {} }"};
    for (const std::string& config : configs) {
      auto local = make(config);
      auto all = make(config);
      const bool regression = config.find("l2_loss") != std::string::npos;
      const int64_t num_class = config.find("num_class: 3") != std::string::npos ? 3 : 2;
      const auto labels = num_class == 3 ? labels3() : labels2();
      TensorMap pred = regression ? TensorMap{{"y", logits_of(1).squeeze(1)}} : softmax_predictions(logits_of(num_class));
      // Rank 0: rows [0, 5), rank 1: rows [5, 12).
      const int64_t mid = 5;
      const int64_t b = pg.rank() == 0 ? 0 : mid, e = pg.rank() == 0 ? mid : kRows;
      auto batch = batch_rows(labels, b, e);
      local->update_metrics(rows(pred, b, e), batch, local->loss(rows(pred, b, e), batch));
      for (auto [lo, hi] : {std::pair<int64_t, int64_t>{0, mid}, {mid, kRows}}) {
        auto part = batch_rows(labels, lo, hi);
        all->update_metrics(rows(pred, lo, hi), part, all->loss(rows(pred, lo, hi), part));
      }
      local->sync_metrics(pg);
      auto got = local->compute_metrics();
      auto want = all->compute_metrics();
      ASSERT_EQ(got.size(), want.size()) << config;
      for (const auto& [name, value] : want) EXPECT_NEAR(got.at(name), value, 1e-9) << config << " " << name;
    }
  });
  dist::testing::expect_all_succeeded(statuses);
}

}  // namespace model_metrics_test
}  // namespace tzrec::models
