// SidRqvae: state-dict names, a whole training step (predictions, the three losses, gradients) and
// an evaluation against sid_model_reference.py (src/models/sid/, plain PyTorch; its printed values
// are copied here), the prediction keys of each mode, candidate SIDs, and the config rules.
#include "models/sid/sid_rqvae.h"

#include <cstdlib>

#include <gtest/gtest.h>

#include "base/error.h"
#include "dist/all_gather_with_grad.h"
#include "dist/testing_multiprocess.h"
#include "loss/sid_contrastive_loss.h"
#include "models/testing.h"
#include "nn/sid/residual_vector_quantizer.h"
#include "nn/sid/sinkhorn.h"
#include "nn/testing.h"

namespace tzrec::models {
namespace sid_rqvae_test {

using testing::dense_feature;
using testing::HasProblem;
using testing::NoProblems;
using testing::parse_config;

torch::Tensor pattern(std::vector<int64_t> shape, double phase) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return torch::arange(n, torch::kFloat).mul(0.37).add(phase).sin().mul(0.5).reshape(shape);
}

std::vector<feature::FeatureInfo> features() {
  return {dense_feature("emb", 6), dense_feature("pair", 6), dense_feature("flag", 1)};
}

// The features of features() as feature_configs.
const char* kFeatures = R"(feature_configs { raw_feature { feature_name: "emb" expression: "item:emb" value_dim: 6 } }
    feature_configs { raw_feature { feature_name: "pair" expression: "item:pair" value_dim: 6 } }
    feature_configs { raw_feature { feature_name: "flag" expression: "item:flag" value_dim: 1 } }
    )";

// `sid` is the body of sid_rqvae, `extra` more of model_config (the losses by default).
protos::EasyRecConfig config(const std::string& sid = "", const std::string& extra = "",
                             const std::string& groups = "") {
  return parse_config(std::string(kFeatures) + R"(model_config {
      feature_groups { group_name: "deep" feature_names: "emb" group_type: DEEP }
      )" + groups + R"(
      sid_rqvae { embed_dim: 3 hidden_dims: 4 codebook: [4, 3] )" +
                      sid + R"( }
      )" + (extra.empty() ? "losses { recon_loss {} } losses { commitment_loss {} }" : extra) +
                      "\n}");
}

const char* kPairGroups = R"(feature_groups { group_name: "pair" feature_names: "pair" group_type: DEEP }
      feature_groups { group_name: "flag" feature_names: "flag" group_type: DEEP })";
const char* kContrastive = R"(contrastive_config { pair_feature_group: "pair" pair_flag_feature_group: "flag" })";
const char* kThreeLosses = "losses { recon_loss {} } losses { commitment_loss {} } losses { contrastive_loss {} }";

std::shared_ptr<Model> build(const protos::EasyRecConfig& c) { return create_model(c, features()); }

sparse::Batch batch() {
  sparse::Batch b;
  b.batch_size = 8;
  b.dense_features = sparse::KeyedTensor::from_tensors(
      {"emb", "pair", "flag"}, {pattern({8, 6}, 2.0) * 2, pattern({8, 6}, 3.1) * 2,
                                torch::tensor({1.0f, 0.0f, 1.0f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f}).unsqueeze(1)});
  return b;
}

// The reference's parameters: PARAMS[i] = pattern(shape, 0.3 i + 0.1).
void set_reference_parameters(Model& model) {
  const std::vector<std::string> names = {"_encoder.0.mlp.0.perceptron.0.weight",
                                          "_encoder.0.mlp.0.perceptron.0.bias",
                                          "_encoder.1.weight",
                                          "_encoder.1.bias",
                                          "_decoder.0.mlp.0.perceptron.0.weight",
                                          "_decoder.0.mlp.0.perceptron.0.bias",
                                          "_decoder.1.weight",
                                          "_decoder.1.bias",
                                          "_quantizer.layers.0.embedding.weight",
                                          "_quantizer.layers.1.embedding.weight"};
  auto params = model.named_parameters();
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < names.size(); ++i) {
    torch::Tensor& p = params[names[i]];
    p.copy_(pattern(p.sizes().vec(), 0.3 * static_cast<double>(i) + 0.1));
  }
}

torch::Tensor param(Model& model, const std::string& name) { return model.named_parameters()[name]; }

TEST(SidRqvae, StateDictNames) {
  auto model = build(config());
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& p : model->named_parameters()) shapes[p.key()] = p.value().sizes().vec();
  const std::map<std::string, std::vector<int64_t>> expected = {{"_encoder.0.mlp.0.perceptron.0.weight", {4, 6}},
                                                                {"_encoder.0.mlp.0.perceptron.0.bias", {4}},
                                                                {"_encoder.1.weight", {3, 4}},
                                                                {"_encoder.1.bias", {3}},
                                                                {"_decoder.0.mlp.0.perceptron.0.weight", {4, 3}},
                                                                {"_decoder.0.mlp.0.perceptron.0.bias", {4}},
                                                                {"_decoder.1.weight", {6, 4}},
                                                                {"_decoder.1.bias", {6}},
                                                                {"_quantizer.layers.0.embedding.weight", {4, 3}},
                                                                {"_quantizer.layers.1.embedding.weight", {3, 3}}};
  EXPECT_EQ(shapes, expected);
  std::vector<std::string> buffers;
  for (const auto& b : model->named_buffers()) buffers.push_back(b.key());
  EXPECT_EQ(buffers, std::vector<std::string>{"_quantizer.initted"});
  // hidden_dims defaults to [input_dim / 2]; the contrastive temperatures sit in _loss_modules.
  auto pair = build(parse_config(std::string(kFeatures) + R"(model_config {
      feature_groups { group_name: "deep" feature_names: "emb" group_type: DEEP }
      )" + kPairGroups + R"(
      sid_rqvae { codebook: 8 )" +
                                 kContrastive + " }\n" + kThreeLosses + "\n}"));
  auto dense = testing::dense_of(*pair);
  EXPECT_EQ(dense.at("_encoder.0.mlp.0.perceptron.0.weight").sizes(), (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(dense.at("_encoder.1.weight").sizes(), (std::vector<int64_t>{64, 3}));  // embed_dim 64
  for (const char* s : {"self", "cl", "ori"}) {
    EXPECT_EQ(dense.count(std::string("_loss_modules.contrastive_loss.logit_scale_") + s), 1u) << s;
  }
}

TEST(SidRqvae, TrainingStepMatchesThePlainReference) {
  auto model = build(config());
  set_reference_parameters(*model);
  model->train();
  const auto predictions = model->predict(batch());
  EXPECT_EQ(testing::keys_of({predictions.begin(), predictions.end()}),
            (std::vector<std::string>{"codes", "encoder_out", "latents", "recon_target", "x_hat"}));
  EXPECT_TRUE(
      torch::equal(predictions.at("codes"),
                   torch::tensor({2, 0, 1, 0, 0, 1, 3, 2, 2, 0, 0, 1, 3, 2, 2, 0}, torch::kInt64).reshape({8, 2})));
  const auto losses = model->loss(predictions, batch());
  EXPECT_NEAR(losses.at("recon_loss").item<float>(), 0.86302376f, 1e-5);
  EXPECT_NEAR(losses.at("commitment_loss").item<float>(), 2.4896231f, 1e-5);
  model->total_loss(losses).backward();
  EXPECT_TRUE(torch::allclose(
      param(*model, "_encoder.0.mlp.0.perceptron.0.weight").grad(),
      torch::tensor({0.14946851f,  0.20387359f,  0.23068537f,  0.22627494f,   0.1912393f,    0.13032033f,
                     0.17222902f,  0.12089442f,  0.053197458f, -0.021699507f, -0.093659483f, -0.15294315f,
                     -0.14695896f, -0.20415853f, -0.23372598f, -0.23165984f,  -0.19823939f,  -0.13798843f,
                     0.20558688f,  0.2478715f,   0.25660804f,  0.23061372f,   0.17340702f,   0.0927305f})
          .reshape({4, 6}),
      1e-4, 1e-6));
  EXPECT_TRUE(torch::allclose(
      param(*model, "_quantizer.layers.0.embedding.weight").grad(),
      torch::tensor({-0.17726733f, -0.10164018f, 0.077080935f, -0.069157675f, -0.04742752f, -0.00038198568f,
                     -0.21777542f, -0.14996758f, -0.011802404f, -0.13549313f, -0.093732595f, 0.016617563f})
          .reshape({4, 3}),
      1e-4, 1e-6));
  EXPECT_TRUE(torch::allclose(
      param(*model, "_decoder.1.bias").grad(),
      torch::tensor({0.25951898f, -0.14900458f, -0.10815737f, 0.22145525f, 0.14160208f, -0.30036131f}), 1e-4, 1e-6));
}

TEST(SidRqvae, EvaluationAndMetricsMatchThePlainReference) {
  auto model = build(config());
  set_reference_parameters(*model);
  model->eval();
  torch::NoGradGuard no_grad;
  const torch::Tensor z = model->predict(batch()).at("encoder_out");
  param(*model, "_quantizer.layers.0.embedding.weight").copy_(z.index_select(0, torch::tensor({0, 2, 3, 7})));
  const auto predictions = model->predict(batch());
  EXPECT_TRUE(
      torch::equal(predictions.at("codes"),
                   torch::tensor({0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 1, 0, 0, 0, 3, 0}, torch::kInt64).reshape({8, 2})));
  model->reset_metrics();
  model->update_metrics(predictions, batch(), model->loss(predictions, batch()));
  const auto metrics = model->compute_metrics();
  EXPECT_EQ(metrics.size(), 3u);
  EXPECT_NEAR(metrics.at("mse"), 1.3392262f, 1e-5);
  EXPECT_NEAR(metrics.at("rel_loss"), 1.0823988f, 1e-5);
  EXPECT_DOUBLE_EQ(metrics.at("unique_sid_ratio"), 0.5f);
  // Inference (predict): the codes only.
  model->set_inference(true);
  const auto inferred = model->predict(batch());
  EXPECT_EQ(inferred.size(), 1u);
  EXPECT_TRUE(torch::equal(inferred.at("codes"), predictions.at("codes")));
}

TEST(SidRqvae, ContrastiveStepMatchesThePlainReference) {
  auto model = build(config(kContrastive, kThreeLosses, kPairGroups));
  set_reference_parameters(*model);
  model->train();
  const auto predictions = model->predict(batch());
  EXPECT_EQ(predictions.at("encoder_out").sizes(), (std::vector<int64_t>{16, 3}));  // both views
  EXPECT_EQ(predictions.at("latents").sizes(), (std::vector<int64_t>{16, 2, 3}));
  EXPECT_TRUE(
      torch::equal(predictions.at("pair_mask"), torch::tensor({true, false, true, true, false, false, true, false})));
  EXPECT_TRUE(torch::equal(predictions.at("recon_mask"), predictions.at("pair_mask").logical_not()));
  EXPECT_TRUE(
      torch::equal(predictions.at("codes"),
                   torch::tensor({2, 0, 1, 0, 0, 1, 3, 2, 2, 0, 0, 1, 3, 2, 2, 0}, torch::kInt64).reshape({8, 2})));
  const auto losses = model->loss(predictions, batch());
  EXPECT_NEAR(losses.at("recon_loss").item<float>(), 1.0824366f, 1e-5);
  EXPECT_NEAR(losses.at("commitment_loss").item<float>(), 2.6632738f, 1e-5);
  EXPECT_NEAR(losses.at("contrastive_loss").item<float>(), 2.4186623f, 1e-4);
  model->total_loss(losses).backward();
  EXPECT_TRUE(torch::allclose(
      param(*model, "_encoder.0.mlp.0.perceptron.0.weight").grad(),
      torch::tensor({-0.0072155371f, 0.023778116f, 0.051553354f, 0.072351158f, 0.083356626f, 0.083080068f,
                     0.048935473f,   -0.05647935f, -0.15424983f, -0.2311433f,  -0.27675265f, -0.28490475f,
                     -0.22620974f,   -0.27121031f, -0.27950379f, -0.24996777f, -0.18659967f, -0.097976312f,
                     0.040203732f,   0.073636189f, 0.097102255f, 0.107426f,    0.10321019f,  0.085025318f})
          .reshape({4, 6}),
      1e-4, 1e-5));
  EXPECT_TRUE(torch::allclose(
      param(*model, "_decoder.1.bias").grad(),
      torch::tensor({1.2076554f, 0.83426839f, 0.063153699f, -0.92441869f, -1.5397646f, -1.6939899f}), 1e-4, 1e-5));
  // Evaluation scores the reconstruction on the non-pair rows only.
  set_reference_parameters(*model);
  model->eval();
  torch::NoGradGuard no_grad;
  const auto eval = model->predict(batch());
  model->reset_metrics();
  model->update_metrics(eval, batch(), {});
  EXPECT_NEAR(model->compute_metrics().at("mse"), 1.0472792f, 1e-5);
}

TEST(SidRqvae, CandidateSids) {
  auto model = build(config("candidate_output_config { enabled: true topk: 2 }"));
  model->eval();
  torch::NoGradGuard no_grad;
  EXPECT_EQ(model->predict(batch()).count("candidate_codes"), 0u);  // evaluation: none
  model->set_inference(true);
  const auto p = model->predict(batch());
  EXPECT_EQ(testing::keys_of({p.begin(), p.end()}),
            (std::vector<std::string>{"candidate_codes", "candidate_scores", "codes"}));
  EXPECT_EQ(p.at("candidate_codes").sizes(), (std::vector<int64_t>{8, 4}));           // [B, K · L]
  EXPECT_TRUE(torch::equal(p.at("candidate_codes").narrow(1, 0, 2), p.at("codes")));  // slot 0: the SID
  EXPECT_TRUE((p.at("candidate_scores").select(1, 0) <= p.at("candidate_scores").select(1, 1)).all().item<bool>());
}

TEST(SidRqvae, ConfigRules) {
  const std::string p = "model_config.sid_rqvae";
  EXPECT_TRUE(NoProblems(config()));
  EXPECT_TRUE(HasProblem(parse_config(std::string(kFeatures) + R"(model_config {
      feature_groups { group_name: "deep" feature_names: "emb" group_type: DEEP }
      sid_rqvae { } losses { recon_loss {} } })"),
                         p + ".codebook", "must be set"));
  EXPECT_TRUE(HasProblem(config("codebook: 0"), p + ".codebook[2]", "must be >= 1"));
  protos::EasyRecConfig no_dim = config();
  no_dim.mutable_model_config()->mutable_sid_rqvae()->set_embed_dim(0);
  EXPECT_TRUE(HasProblem(no_dim, p + ".embed_dim", "must be >= 1"));
  EXPECT_TRUE(HasProblem(config("hidden_dims: 0"), p + ".hidden_dims", "must be >= 1"));
  EXPECT_TRUE(HasProblem(config("forward_mode: \"soft\""), p + ".forward_mode", "\"soft\" is not a forward mode"));
  EXPECT_TRUE(HasProblem(config("distance_type: \"l1\""), p + ".distance_type", "\"l1\" is not a distance"));
  EXPECT_TRUE(HasProblem(config("sinkhorn_config { epsilon: 0 }"), p + ".sinkhorn_config.epsilon", "must be > 0"));
  EXPECT_TRUE(NoProblems(config("sinkhorn_config { enabled: false epsilon: 0 }")));
  EXPECT_TRUE(NoProblems(config("forward_mode: \"gumbel_softmax\"")));  // Sinkhorn turned off, warned
  EXPECT_TRUE(HasProblem(config("candidate_output_config { enabled: true topk: 4 }"),
                         p + ".candidate_output_config.topk", "must be in [1, 3]"));
  EXPECT_TRUE(HasProblem(config("candidate_output_config { enabled: true strategy: \"beam\" }"),
                         p + ".candidate_output_config.strategy", "only \"last_layer_knn\""));
  // Losses.
  EXPECT_TRUE(HasProblem(config("", "losses { recon_loss { recon_type: \"l3\" } }"),
                         "model_config.losses[0].recon_loss.recon_type", "\"l3\" is not a distance"));
  EXPECT_TRUE(HasProblem(config("", "losses { commitment_loss { latent_weight: [1, 2, 3] } }"),
                         "model_config.losses[0].commitment_loss.latent_weight", "exactly 2 values"));
  EXPECT_TRUE(HasProblem(config("", "losses { commitment_loss { commitment_type: \"dot\" } }"),
                         "model_config.losses[0].commitment_loss.commitment_type", "not a distance"));
  EXPECT_TRUE(HasProblem(config("", "losses { recon_loss {} } losses { binary_cross_entropy {} }"),
                         "model_config.losses[1].binary_cross_entropy", "train on recon_loss"));
  EXPECT_TRUE(HasProblem(config("", "losses { recon_loss {} } losses { recon_loss {} }"),
                         "model_config.losses[1].recon_loss", "configured twice"));
  EXPECT_TRUE(HasProblem(config("", "losses { }"), "model_config.losses[0]", "no loss set"));
  EXPECT_TRUE(HasProblem(parse_config(std::string(kFeatures) + R"(model_config {
      feature_groups { group_name: "deep" feature_names: "emb" group_type: DEEP }
      sid_rqvae { codebook: 4 } })"),
                         "model_config.losses", "trains on its SID losses"));
  // The pair structure and its loss come together; the groups exist and fit.
  EXPECT_TRUE(HasProblem(config(kContrastive, "", kPairGroups), p + ".contrastive_config", "must be set together"));
  EXPECT_TRUE(HasProblem(config("", kThreeLosses, kPairGroups), p + ".contrastive_config", "must be set together"));
  EXPECT_TRUE(HasProblem(config(kContrastive, kThreeLosses), p + ".contrastive_config.pair_feature_group",
                         "'pair' is not a DEEP feature group"));
  EXPECT_TRUE(HasProblem(config(R"(contrastive_config { pair_feature_group: "flag" pair_flag_feature_group: "flag" })",
                                kThreeLosses, kPairGroups),
                         p + ".contrastive_config.pair_feature_group", "has total dim 1"));
  EXPECT_TRUE(HasProblem(config(R"(contrastive_config { pair_feature_group: "pair" pair_flag_feature_group: "pair" })",
                                kThreeLosses, kPairGroups),
                         p + ".contrastive_config.pair_flag_feature_group", "width 1"));
}

// Two ranks (dist/testing_multiprocess.h). Expected values from the one-process computation on
// the ranks' rows together: Sinkhorn's assignment (its sums over the ranks), the k-means codebooks
// (rank 0's fit, broadcast), the contrastive loss (every rank's rows as targets; with as many pair
// rows on each rank the mean of the ranks' losses is the one-process loss of all rows).
TEST(SidRqvae, TwoRanksAgreeWithOneProcessOnTheirRowsTogether) {
  auto statuses = dist::testing::run_ranks(2, [](dist::ProcessGroup& pg) {
    auto ranks = std::make_shared<nn::Collectives>();
    ranks->world_size = 2;
    ranks->rank = pg.rank();
    ranks->all_reduce_sum = [&pg](torch::Tensor& t) { pg.all_reduce(t, dist::ReduceOp::kSum, "test sums"); };
    ranks->broadcast = [&pg](torch::Tensor& t, int root) { pg.broadcast(t, root, "test broadcast"); };
    const int64_t half = 6;
    // Sinkhorn: cost [12, 4] split by rows.
    const torch::Tensor cost = nn::testing::pattern({2 * half, 4}, 0.3).abs();
    const torch::Tensor mine = cost.narrow(0, pg.rank() * half, half);
    const torch::Tensor whole = nn::sid::sinkhorn(cost, 3, 2.0);
    EXPECT_TRUE(torch::allclose(nn::sid::sinkhorn(mine, 3, 2.0, *ranks), whole.narrow(0, pg.rank() * half, half),
                                1e-5, 1e-7));
    // k-means init: different rows per rank, rank 0's codebooks everywhere.
    nn::sid::ResidualVectorQuantizerOptions q;
    q.embed_dim = 3;
    q.n_embed = {4, 2};
    q.kmeans_init = true;
    q.use_sinkhorn = true;
    nn::sid::ResidualVectorQuantizer rvq(q);
    rvq->set_collectives(ranks);
    rvq->train();
    const torch::Tensor data = nn::testing::pattern({8, 3}, 0.1 + pg.rank());
    rvq->forward(data);
    nn::sid::ResidualVectorQuantizer alone(q);
    alone->train();
    alone->forward(nn::testing::pattern({8, 3}, 0.1));
    for (size_t i = 0; i < 2; ++i) {
      const auto name = "layers." + std::to_string(i) + ".embedding.weight";
      EXPECT_TRUE(torch::allclose(rvq->named_parameters()[name], alone->named_parameters()[name], 1e-6, 1e-7)) << name;
    }
    // Contrastive loss: 3 pair rows of 4 on each rank.
    const torch::Tensor a = nn::testing::pattern({8, 5}, 0.2), b = nn::testing::pattern({8, 5}, 0.7);
    const torch::Tensor ao = nn::testing::pattern({8, 5}, 1.2), bo = nn::testing::pattern({8, 5}, 1.7);
    const torch::Tensor mask = torch::tensor({true, false, true, true, true, true, false, true});
    loss::SidContrastiveLoss one, two;
    const double whole_loss = one->forward(a, b, ao, bo, mask).item<double>();
    loss::RankRows rows;
    rows.offset = pg.rank() * 4;
    rows.rows = [&pg](const torch::Tensor& x) { return dist::all_gather_with_grad(pg, x, "test rows"); };
    auto slice = [&](const torch::Tensor& x) { return x.narrow(0, pg.rank() * 4, 4); };
    const torch::Tensor mine_a = slice(a).clone().requires_grad_(true);
    torch::Tensor l = two->forward(mine_a, slice(b), slice(ao), slice(bo), slice(mask), &rows);
    torch::Tensor both = l.detach().clone();
    pg.all_reduce(both, dist::ReduceOp::kSum, "test loss");
    EXPECT_NEAR(both.item<double>() / 2, whole_loss, 1e-5);
    l.backward();  // the gathered targets' gradients travel back through the ranks
    ASSERT_TRUE(mine_a.grad().defined());
    EXPECT_GT(mine_a.grad().abs().sum().item<double>(), 0.0);
  });
  dist::testing::expect_all_succeeded(statuses);
}

}  // namespace sid_rqvae_test
}  // namespace tzrec::models
