// SidRqkmeans: state names, the training contract (reservoir, zero codes, a zero loss with a
// graph), the end-of-training fit against the quantizer fitted directly on the same rows,
// evaluation and inference predictions and metrics, the checkpoint round trip of the fitted
// codebook, and the config rules.
#include "models/sid/sid_rqkmeans.h"

#include <cmath>
#include <cstdlib>

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"

namespace tzrec::models {
namespace sid_rqkmeans_test {

using testing::dense_feature;
using testing::HasProblem;
using testing::NoProblems;
using testing::parse_config;

// kwargs: the body of faiss_kmeans_kwargs.
protos::EasyRecConfig config(const std::string& sid = "", const std::string& extra = "",
                             const std::string& kwargs = "niter: 5 seed: 42") {
  return parse_config(R"(feature_configs { raw_feature { feature_name: "emb" expression: "item:emb" value_dim: 4 } }
      model_config {
      feature_groups { group_name: "deep" feature_names: "emb" group_type: DEEP }
      sid_rqkmeans { codebook: [4, 3] faiss_kmeans_kwargs { )" +
                      kwargs + " } " + sid + R"( }
      )" + extra + "\n}");
}

std::shared_ptr<SidRqkmeans> build(const protos::EasyRecConfig& c) {
  return std::dynamic_pointer_cast<SidRqkmeans>(create_model(c, {dense_feature("emb", 4)}));
}

// Rows around 4 centers of a 4-dim space.
torch::Tensor rows(int64_t n, double phase) {
  const torch::Tensor c = torch::tensor(
      {{2.0f, 0.0f, 1.0f, -1.0f}, {-2.0f, 1.0f, 0.0f, 0.5f}, {0.0f, -2.0f, -1.0f, 1.0f}, {1.5f, 1.5f, -1.5f, 0.0f}});
  const torch::Tensor noise = torch::arange(n * 4, torch::kFloat).mul(0.37).add(phase).sin().mul(0.15).reshape({n, 4});
  return c.index_select(0, torch::arange(n, torch::kInt64).remainder(4)) + noise;
}

sparse::Batch batch(const torch::Tensor& emb) {
  sparse::Batch b;
  b.batch_size = emb.size(0);
  b.dense_features = sparse::KeyedTensor::from_tensors({"emb"}, {emb});
  return b;
}

TEST(SidRqkmeans, StateNames) {
  auto model = build(config());
  std::vector<std::string> params, buffers;
  for (const auto& p : model->named_parameters()) params.push_back(p.key());
  for (const auto& b : model->named_buffers()) buffers.push_back(b.key());
  EXPECT_EQ(params, std::vector<std::string>{"_dummy_param"});
  EXPECT_EQ(buffers,
            (std::vector<std::string>{"_quantizer.layers.0.centroids", "_quantizer.layers.0._is_initialized",
                                      "_quantizer.layers.1.centroids", "_quantizer.layers.1._is_initialized"}));
  EXPECT_EQ(model->reservoir().capacity(), 4 * 256);  // max(codebook) · faiss's max_points_per_centroid
}

TEST(SidRqkmeans, TrainsByFittingAfterTraining) {
  auto model = build(config());
  model->train();
  for (int b = 0; b < 3; ++b) {
    const auto predictions = model->predict(batch(rows(16, b)));
    EXPECT_EQ(predictions.size(), 1u);
    EXPECT_TRUE(torch::equal(predictions.at("codes"), torch::zeros({16, 2}, torch::kInt64)));
    const auto losses = model->loss(predictions, batch(rows(16, b)));
    EXPECT_EQ(losses.at("dummy_loss").item<float>(), 0.0f);
    model->total_loss(losses).backward();  // a graph to step on, with zero gradients
  }
  EXPECT_EQ(model->reservoir().n_seen(), 48);
  // Before the fit evaluation has no reconstruction: metrics stay NaN.
  model->eval();
  {
    torch::NoGradGuard no_grad;
    const auto p = model->predict(batch(rows(8, 9)));
    EXPECT_EQ(p.count("x_hat"), 0u);
    model->reset_metrics();
    model->update_metrics(p, batch(rows(8, 9)), {});
    EXPECT_TRUE(std::isnan(model->compute_metrics().at("mse")));
  }
  model->train();
  const torch::Tensor sample = model->reservoir().sample().clone();
  ASSERT_TRUE(model->on_train_end());
  EXPECT_EQ(model->reservoir().n_seen(), 0);  // emptied
  // The same fit as the quantizer's own on the sampled rows.
  nn::sid::ResidualKMeansQuantizerOptions o;
  o.embed_dim = 4;
  o.n_embed = {4, 3};
  o.kmeans.niter = 5;
  o.kmeans.seed = 42;
  nn::sid::ResidualKMeansQuantizer direct(o);
  direct->train_offline(sample, false);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(torch::equal(static_cast<nn::sid::KMeansQuantizeLayerImpl&>(model->quantizer()->layer(i)).centroids,
                             static_cast<nn::sid::KMeansQuantizeLayerImpl&>(direct->layer(i)).centroids));
  }
  model->eval();
  torch::NoGradGuard no_grad;
  const torch::Tensor emb = rows(12, 5.0);
  const auto p = model->predict(batch(emb));
  EXPECT_EQ(testing::keys_of({p.begin(), p.end()}), (std::vector<std::string>{"codes", "recon_target", "x_hat"}));
  direct->eval();
  EXPECT_TRUE(torch::equal(p.at("codes"), direct->forward(emb).cluster_ids));
  // The first layer finds the 4 centers: codes 0 repeat with period 4.
  EXPECT_TRUE(torch::equal(p.at("codes").select(1, 0).narrow(0, 0, 4), p.at("codes").select(1, 0).narrow(0, 4, 4)));
  model->reset_metrics();
  model->update_metrics(p, batch(emb), {});
  const auto metrics = model->compute_metrics();
  const double mse = (p.at("x_hat") - emb).pow(2).mean().item<double>();
  EXPECT_NEAR(metrics.at("mse"), mse, 1e-9);
  EXPECT_LT(metrics.at("mse"), 0.05);
  EXPECT_LT(metrics.at("rel_loss"), 1.0);
  EXPECT_GT(metrics.at("unique_sid_ratio"), 0.0);
  model->set_inference(true);
  EXPECT_EQ(model->predict(batch(emb)).size(), 1u);  // codes only
}

TEST(SidRqkmeans, CheckpointedCodebookRoundTrips) {
  auto model = build(config("candidate_output_config { enabled: true topk: 2 }"));
  model->train();
  model->predict(batch(rows(40, 0.0)));
  ASSERT_TRUE(model->on_train_end());
  auto restored = build(config("candidate_output_config { enabled: true topk: 2 }"));
  {
    torch::NoGradGuard no_grad;
    auto from = model->named_buffers();
    for (auto& b : restored->named_buffers()) b.value().copy_(from[b.key()]);
  }
  model->eval();
  restored->eval();
  model->set_inference(true);
  restored->set_inference(true);
  torch::NoGradGuard no_grad;
  const auto a = model->predict(batch(rows(10, 2.0)));
  const auto b = restored->predict(batch(rows(10, 2.0)));
  EXPECT_TRUE(torch::equal(a.at("codes"), b.at("codes")));
  EXPECT_TRUE(torch::equal(a.at("candidate_codes"), b.at("candidate_codes")));
  EXPECT_EQ(b.at("candidate_scores").sizes(), (std::vector<int64_t>{10, 2}));
  // A flag without centroids (a checkpoint taken mid-fit) is refused when the model runs.
  auto broken = build(config());
  broken->named_buffers()["_quantizer.layers.0._is_initialized"].fill_(true);
  broken->eval();
  EXPECT_THROW(broken->predict(batch(rows(2, 0.0))), CheckpointError);
}

TEST(SidRqkmeans, EmptyReservoirFitsNothing) {
  auto model = build(config());
  EXPECT_FALSE(model->on_train_end());
  EXPECT_FALSE(model->quantizer()->is_fitted());
}

TEST(SidRqkmeans, ConfigRules) {
  const std::string p = "model_config.sid_rqkmeans";
  EXPECT_TRUE(NoProblems(config()));
  EXPECT_TRUE(NoProblems(config("", "losses { recon_loss {} }")));  // no effect, warned
  EXPECT_TRUE(HasProblem(config("train_sample_size: 3"), p + ".train_sample_size", "set it to at least 4"));
  EXPECT_TRUE(NoProblems(config("train_sample_size: 4")));
  EXPECT_TRUE(HasProblem(config("", "", "nredo: 0"), p + ".faiss_kmeans_kwargs.nredo", "must be >= 1"));
  EXPECT_TRUE(
      HasProblem(config("", "", "seed: 3000000000"), p + ".faiss_kmeans_kwargs.seed", "does not fit faiss's int"));
  EXPECT_TRUE(HasProblem(config("", "", "max_points_per_centroid: 0"),
                         p + ".faiss_kmeans_kwargs.max_points_per_centroid", "must be >= 1"));
  EXPECT_TRUE(HasProblem(config("codebook: 0"), p + ".codebook[2]", "must be >= 1"));
  EXPECT_TRUE(HasProblem(parse_config(R"(model_config { sid_rqkmeans { codebook: 4 } })"),
                         "model_config.feature_groups", "quantizes its first DEEP feature group"));
  EXPECT_TRUE(HasProblem(config("candidate_output_config { enabled: true topk: 4 }"),
                         p + ".candidate_output_config.topk", "must be in [1, 3]"));
  // A model_config.faiss_kmeans_kwargs field that is set keeps its value; the others faiss's defaults.
  auto model = build(config("", "", "niter: 5 max_points_per_centroid: 10 spherical: true"));
  const auto& k = model->quantizer()->options().kmeans;
  EXPECT_EQ(k.niter, 5);
  EXPECT_EQ(k.nredo, 1);
  EXPECT_EQ(k.min_points_per_centroid, 39);
  EXPECT_TRUE(k.spherical);
  EXPECT_EQ(model->reservoir().capacity(), 40);
}

// WORLD_SIZE=2 (with the variables a launcher sets beside it) while alive.
class TwoRanksEnv {
 public:
  TwoRanksEnv() {
    for (const auto& [k, v] : kVars) ::setenv(k, v, 1);
  }
  ~TwoRanksEnv() {
    for (const auto& [k, v] : kVars) ::unsetenv(k);
  }

 private:
  static constexpr std::pair<const char*, const char*> kVars[] = {
      {"WORLD_SIZE", "2"}, {"RANK", "0"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29500"}};
};

TEST(SidRqkmeans, RefusesSeveralProcesses) {
  std::string error;
  try {
    TwoRanksEnv env;
    build(config());
  } catch (const UsageError& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("model_config.sid_rqkmeans: fits its codebook in one process"), std::string::npos) << error;
}

}  // namespace sid_rqkmeans_test
}  // namespace tzrec::models
