// DSSM / DSSMv2 and the match-model base. Expected values: the similarity of TorchEasyRec's
// MatchModel.sim worked out by hand (tzrec/models/match_model.py: _sim_with_sampler), and the
// towers recomputed here with plain libtorch from the model's own parameters (embedding rows
// summed, Linear + ReLU, output Linear, L2 normalisation), with gradients from autograd on that
// reference.
#include "models/match/dssm.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/match/dssm_v2.h"
#include "models/testing.h"

namespace tzrec::models {
namespace dssm_test {

using testing::dense_of;
using testing::error_of;
using testing::make_kjt;
using testing::parse_config;
using testing::pooled;
using testing::sparse_feature;
using testing::tables_of;

// User feature "u" (5 rows, dim 2); item features "i" (6 rows, dim 2) and "c" (3 rows, dim 2),
// the negative sampler's attr_fields (data group __NEG__) unless `in_batch`.
std::vector<feature::FeatureInfo> features(bool in_batch) {
  std::vector<feature::FeatureInfo> out = {sparse_feature("u", 5, 2), sparse_feature("i", 6, 2),
                                           sparse_feature("c", 3, 2)};
  if (!in_batch) out[1].neg = out[2].neg = out[1].sampled = out[2].sampled = true;
  return out;
}

std::string config_text(const std::string& model, const std::string& extra = "") {
  return R"(data_config { label_fields: "clk" }
    model_config {
      feature_groups { group_name: "user" feature_names: ["u"] }
      feature_groups { group_name: "item" feature_names: ["i", "c"] }
      )" + model + R"( {
        user_tower { input: "user" mlp { hidden_units: [3] } }
        item_tower { input: "item" mlp { hidden_units: [3] } }
        output_dim: 2
        )" + extra + R"(
      }
      losses { softmax_cross_entropy {} }
      metrics { recall_at_k { top_k: 1 } }
    })";
}

std::shared_ptr<Model> build(const std::string& model, const std::string& extra, bool in_batch) {
  auto config = parse_config(config_text(model, extra));
  torch::manual_seed(7);
  return create_model(config, features(in_batch));
}

// B = 2 users; items: the 2 positives, then N = 2 sampled negatives (the __NEG__ rows).
const std::vector<std::vector<int64_t>> kUser = {{1}, {3}};
const std::vector<std::vector<int64_t>> kItemI = {{0}, {2}, {4}, {5}};
const std::vector<std::vector<int64_t>> kItemC = {{1}, {}, {2}, {0, 1}};

sparse::Batch sampled_batch() {
  sparse::Batch batch;
  batch.batch_size = 2;
  batch.sparse_features = make_kjt({"u"}, {kUser});
  batch.neg_batch_size = 4;
  batch.neg_sparse_features = make_kjt({"i", "c"}, {kItemI, kItemC});
  batch.labels["clk"] = torch::tensor({1.0f, 1.0f});
  return batch;
}

// The tower of `prefix` recomputed from the model's parameters.
torch::Tensor reference_tower(std::map<std::string, torch::Tensor>& p, const std::string& prefix,
                              const torch::Tensor& x, bool cosine) {
  torch::Tensor h = torch::relu(testing::linear(x, p, prefix + ".mlp.mlp.0.perceptron.0"));
  torch::Tensor out = testing::linear(h, p, prefix + ".output");
  if (cosine) out = out / out.norm(2, 1, true).clamp_min(1e-12);
  return out;
}

TEST(MatchSimilarity, SampledNegativesAndHardNegativesByHand) {
  // users u0 = (1, 0), u1 = (0, 2); positives p0 = (1, 1), p1 = (2, 0); one simple negative
  // n = (0, 1); hard negatives h0 = (3, 0) of user 0 at position 1, h1 = (0, 1) of user 1 at 0.
  torch::Tensor user = torch::tensor({{1.0f, 0.0f}, {0.0f, 2.0f}});
  torch::Tensor item = torch::tensor({{1.0f, 1.0f}, {2.0f, 0.0f}, {0.0f, 1.0f}, {3.0f, 0.0f}, {0.0f, 1.0f}});
  torch::Tensor hard = torch::tensor({{0, 1}, {1, 0}}, torch::kInt64);
  torch::Tensor sim = match_similarity(user, item, hard, false);
  // [<u,p> | <u,n> | hard (width 2)]: row 0: 1 | 0 | -1e32, 3; row 1: 0 | 2 | 2, -1e32.
  ASSERT_EQ(sim.sizes(), (std::vector<int64_t>{2, 4}));
  EXPECT_FLOAT_EQ(sim[0][0].item<float>(), 1.0f);
  EXPECT_FLOAT_EQ(sim[0][1].item<float>(), 0.0f);
  EXPECT_FLOAT_EQ(sim[0][2].item<float>(), -1e32f);
  EXPECT_FLOAT_EQ(sim[0][3].item<float>(), 3.0f);
  EXPECT_FLOAT_EQ(sim[1][0].item<float>(), 0.0f);
  EXPECT_FLOAT_EQ(sim[1][1].item<float>(), 2.0f);
  EXPECT_FLOAT_EQ(sim[1][2].item<float>(), 2.0f);
  EXPECT_FLOAT_EQ(sim[1][3].item<float>(), -1e32f);
  // Without hard negatives: the first three items only.
  torch::Tensor plain = match_similarity(user, item.narrow(0, 0, 3), torch::Tensor(), false);
  EXPECT_TRUE(torch::equal(plain, torch::tensor({{1.0f, 0.0f}, {0.0f, 2.0f}})));
  // In-batch negatives: user @ item^T.
  torch::Tensor in_batch = match_similarity(user, item.narrow(0, 0, 2), torch::Tensor(), true);
  EXPECT_TRUE(torch::equal(in_batch, torch::tensor({{1.0f, 2.0f}, {2.0f, 0.0f}})));
}

TEST(DSSM, StateDictNamesFollowTorchEasyRec) {
  auto model = build("dssm", "", false);
  std::vector<std::string> names;
  for (const auto& item : model->named_parameters()) names.push_back(item.key());
  const std::vector<std::string> expected = {
      "user_tower.embedding_group.emb_impls.__BASE__.ebc.embedding_bags.u_emb.weight",
      "user_tower.mlp.mlp.0.perceptron.0.weight",
      "user_tower.mlp.mlp.0.perceptron.0.bias",
      "user_tower.output.weight",
      "user_tower.output.bias",
      "item_tower.embedding_group.emb_impls.__NEG__.ebc.embedding_bags.i_emb.weight",
      "item_tower.embedding_group.emb_impls.__NEG__.ebc.embedding_bags.c_emb.weight",
      "item_tower.mlp.mlp.0.perceptron.0.weight",
      "item_tower.mlp.mlp.0.perceptron.0.bias",
      "item_tower.output.weight",
      "item_tower.output.bias"};
  EXPECT_EQ(names, expected);
  // Tables: unique names across the towers; their checkpoint names are the state-dict names.
  const auto& groups = model->embeddings();
  std::vector<std::string> tables;
  for (const auto& t : model->embedding_tables()) tables.push_back(t.name);
  EXPECT_EQ(tables, (std::vector<std::string>{"user_tower.u_emb", "item_tower.neg.i_emb", "item_tower.neg.c_emb"}));
  EXPECT_EQ(groups.parameter_name_of("item_tower.neg.c_emb"),
            "item_tower.embedding_group.emb_impls.__NEG__.ebc.embedding_bags.c_emb.weight");
  EXPECT_EQ(groups.parameter_name_of("user_tower.u_emb"),
            "user_tower.embedding_group.emb_impls.__BASE__.ebc.embedding_bags.u_emb.weight");
}

TEST(DSSMV2, SharesOneEmbeddingGroup) {
  auto model = build("dssm_v2", "", false);
  std::vector<std::string> names;
  for (const auto& item : model->named_parameters()) names.push_back(item.key());
  const std::vector<std::string> expected = {
      "embedding_group.emb_impls.__BASE__.ebc.embedding_bags.u_emb.weight",
      "embedding_group.emb_impls.__NEG__.ebc.embedding_bags.i_emb.weight",
      "embedding_group.emb_impls.__NEG__.ebc.embedding_bags.c_emb.weight",
      "user_tower.mlp.mlp.0.perceptron.0.weight",
      "user_tower.mlp.mlp.0.perceptron.0.bias",
      "user_tower.output.weight",
      "user_tower.output.bias",
      "item_tower.mlp.mlp.0.perceptron.0.weight",
      "item_tower.mlp.mlp.0.perceptron.0.bias",
      "item_tower.output.weight",
      "item_tower.output.bias"};
  EXPECT_EQ(names, expected);
}

// Values and gradients of similarity and loss against the plain reference, for both models,
// inner product and cosine, sampled and in-batch negatives.
void check_against_reference(const std::string& kind, bool cosine, bool in_batch, double temperature) {
  SCOPED_TRACE(kind + (cosine ? " cosine" : " inner product") + (in_batch ? " in-batch" : " sampled"));
  std::string extra = fmt::format("temperature: {}", temperature);
  if (cosine) extra += " similarity: COSINE";
  if (in_batch) extra += " in_batch_negative: true";
  auto model = build(kind, extra, in_batch);
  model->train();
  sparse::Batch batch = sampled_batch();
  if (in_batch) {  // items are BASE features of the batch's 2 rows
    batch.sparse_features = make_kjt({"u", "i", "c"}, {kUser, {kItemI[0], kItemI[1]}, {kItemC[0], kItemC[1]}});
    batch.neg_batch_size = 2;
    batch.neg_sparse_features = make_kjt({"i", "c"}, {{kItemI[0], kItemI[1]}, {kItemC[0], kItemC[1]}});
  }
  auto predictions = model->predict(batch);
  auto losses = model->loss(predictions, batch);
  torch::Tensor sim = predictions.at("similarity");
  torch::Tensor loss = losses.at("softmax_cross_entropy");
  loss.backward();

  // The reference on detached copies of every parameter.
  std::map<std::string, torch::Tensor> p;
  for (const auto& item : model->named_parameters()) p[item.key()] = item.value().detach().clone().requires_grad_(true);
  auto table = [&](const std::string& feature) {
    for (const auto& [name, t] : p) {
      if (name.find(".embedding_bags." + feature + "_emb.weight") != std::string::npos) return t;
    }
    ADD_FAILURE() << "no table for " << feature;
    return torch::Tensor();
  };
  const int64_t items = in_batch ? 2 : 4;
  std::vector<std::vector<int64_t>> ids_i(kItemI.begin(), kItemI.begin() + items);
  std::vector<std::vector<int64_t>> ids_c(kItemC.begin(), kItemC.begin() + items);
  auto lookup = [](const torch::Tensor& w, const std::vector<std::vector<int64_t>>& ids) {
    std::vector<torch::Tensor> rows;
    for (const auto& row : ids) {
      torch::Tensor acc = w.index_select(0, torch::tensor(row.empty() ? std::vector<int64_t>{0} : row)).sum(0);
      rows.push_back(row.empty() ? acc * 0 : acc);
    }
    return torch::stack(rows);
  };
  torch::Tensor user_x = lookup(table("u"), kUser);
  torch::Tensor item_x = torch::cat({lookup(table("i"), ids_i), lookup(table("c"), ids_c)}, 1);
  torch::Tensor user = reference_tower(p, "user_tower", user_x, cosine);
  torch::Tensor item = reference_tower(p, "item_tower", item_x, cosine);
  torch::Tensor ref_sim;
  if (in_batch) {
    ref_sim = torch::mm(user, item.t());
  } else {
    ref_sim = torch::cat({(user * item.narrow(0, 0, 2)).sum(1, true), torch::mm(user, item.narrow(0, 2, 2).t())}, 1);
  }
  ref_sim = ref_sim / temperature;
  torch::Tensor target = in_batch ? torch::arange(2) : torch::zeros({2}, torch::kInt64);
  torch::Tensor ref_loss = torch::nn::functional::cross_entropy(ref_sim, target);
  ref_loss.backward();

  EXPECT_TRUE(torch::allclose(sim, ref_sim, 1e-5, 1e-6)) << sim << ref_sim;
  EXPECT_NEAR(loss.item<double>(), ref_loss.item<double>(), 1e-5);
  for (const auto& item_param : model->named_parameters()) {
    const torch::Tensor& g = item_param.value().grad();
    ASSERT_TRUE(g.defined()) << item_param.key();
    // Float rounding (1 / temperature up to 20 amplifies it): relative to the gradient's largest entry.
    const torch::Tensor& ref = p[item_param.key()].grad();
    const double scale = std::max(1.0, ref.abs().max().item<double>());
    EXPECT_TRUE(torch::allclose(g.is_sparse() ? g.to_dense() : g, ref, 1e-4, 1e-5 * scale))
        << item_param.key() << "\n" << g << "\n" << ref;
  }
}

TEST(DSSM, ValuesAndGradientsMatchThePlainReference) {
  check_against_reference("dssm", false, false, 1.0);
  check_against_reference("dssm", true, false, 0.05);
  check_against_reference("dssm", false, true, 0.5);
}

TEST(DSSMV2, ValuesAndGradientsMatchThePlainReference) {
  check_against_reference("dssm_v2", false, false, 1.0);
  check_against_reference("dssm_v2", true, true, 0.2);
}

TEST(DSSM, RecallAtKCountsThePositiveColumn) {
  auto model = build("dssm", "", false);
  model->eval();
  sparse::Batch batch = sampled_batch();
  // Hand-made similarities: row 0 ranks its positive first, row 1 does not.
  TensorMap predictions = {{"similarity", torch::tensor({{3.0f, 1.0f, 2.0f}, {0.5f, 2.0f, 1.0f}})}};
  model->update_metrics(predictions, batch, {});
  auto metrics = model->compute_metrics();
  ASSERT_EQ(metrics.count("recall@1"), 1u);
  EXPECT_DOUBLE_EQ(metrics.at("recall@1"), 0.5);
}

TEST(DSSM, TrainMetricRecallAtK) {
  auto config = parse_config(config_text("dssm", "in_batch_negative: true"));
  config.mutable_model_config()->add_train_metrics()->mutable_recall_at_k()->set_top_k(1);
  config.mutable_model_config()->mutable_train_metrics(0)->set_decay_step(1);
  auto model = create_model(config, features(true));
  sparse::Batch batch = sampled_batch();
  // In-batch targets: the diagonal; row 0's best column is 0 (hit), row 1's is 0 (miss).
  model->update_train_metrics({{"similarity", torch::tensor({{2.0f, 1.0f}, {3.0f, 1.0f}})}}, batch);
  EXPECT_DOUBLE_EQ(model->compute_train_metrics().at("recall@1"), 0.5);
}

TEST(DSSM, SampleWeightsWeightTheRows) {
  auto config = parse_config(config_text("dssm", ""));
  config.mutable_data_config()->add_sample_weight_fields("w");
  auto model = create_model(config, features(false));
  sparse::Batch batch = sampled_batch();
  batch.sample_weights["w"] = torch::tensor({1.0f, 3.0f});
  torch::Tensor sim = torch::tensor({{2.0f, 0.0f, 1.0f}, {0.0f, 1.0f, 1.0f}});
  auto losses = model->loss({{"similarity", sim}}, batch);
  // CE_b = -log softmax(row)[0]; loss = mean(CE * w) / mean(w) = (CE_0 + 3 CE_1) / 4.
  torch::Tensor ce = -torch::log_softmax(sim, 1).select(1, 0);
  const double expected = (ce[0].item<double>() + 3 * ce[1].item<double>()) / 4;
  EXPECT_NEAR(losses.at("softmax_cross_entropy").item<double>(), expected, 1e-6);
}

TEST(DSSM, ConfigMistakesAreErrorsNamingTheField) {
  auto error = [](const std::string& text, bool in_batch = false) {
    return error_of([&] { create_model(parse_config(text), features(in_batch)); });
  };
  auto replaced = [](std::string text, const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  EXPECT_NE(error(config_text("dssm", ""), /*in_batch=*/true).find("model_config.dssm.in_batch_negative"),
            std::string::npos);
  EXPECT_NE(error(config_text("dssm", "temperature: 0")).find("model_config.dssm.temperature: must be a positive"),
            std::string::npos);
  EXPECT_NE(error(config_text("dssm", "similarity: EUCLID")).find("not supported yet: model_config.dssm.similarity"),
            std::string::npos);
  const std::string bad_loss = replaced(config_text("dssm", ""), "softmax_cross_entropy {}", "binary_cross_entropy {}");
  EXPECT_NE(error(bad_loss).find("model_config.losses[0]: a match model's loss is softmax_cross_entropy"),
            std::string::npos);
  const std::string bad_metric = replaced(config_text("dssm", ""), "recall_at_k { top_k: 1 }", "auc {}");
  EXPECT_NE(error(bad_metric).find("model_config.metrics[0].auc: a match model has only"), std::string::npos);
  const std::string no_group = replaced(config_text("dssm", ""), "input: \"item\"", "input: \"items\"");
  EXPECT_NE(error(no_group).find("dssm needs a feature group named 'items'"), std::string::npos);
  const std::string no_mlp = replaced(config_text("dssm", ""), "item_tower { input: \"item\" mlp { hidden_units: [3] } }",
                                      "item_tower { input: \"item\" }");
  EXPECT_NE(error(no_mlp).find("model_config.dssm.item_tower.mlp: required"), std::string::npos);
  // With a sampler, an item feature that is not one of its attr_fields.
  const std::string mixed = error(replaced(config_text("dssm", ""), "[\"i\", \"c\"]", "[\"i\", \"c\", \"u\"]"));
  EXPECT_NE(mixed.find("the negative sampler does not provide (u)"), std::string::npos) << mixed;
}

}  // namespace dssm_test
}  // namespace tzrec::models
