// HSTUMatch against hstu_match_reference.py (an independent plain-PyTorch version of TorchEasyRec's
// HSTUMatch forward and backward on padded tensors), its parameter names, the empty-history and
// descending-history rules, the item package's config, and its config errors.
#include "models/match/hstu_match.h"

#include <set>

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"
#include "nn/testing.h"

namespace tzrec::models {
namespace hstu_match_test {

using testing::error_of;
using testing::sequence_feature;
using testing::make_kjt;
using testing::parse_config;

std::string config(const std::string& model_extra = "", const std::string& hstu_extra = "") {
  return R"pb(
  data_config { label_fields: "cand_seq__action_weight" }
  model_config {
    feature_groups { group_name: "contextual" feature_names: ["user_id", "user_level"] group_type: DEEP }
    feature_groups { group_name: "uih" feature_names: "uih_seq__video_id" group_type: JAGGED_SEQUENCE }
    feature_groups { group_name: "candidate" feature_names: "cand_seq__video_id" group_type: JAGGED_SEQUENCE }
    feature_groups { group_name: "uih_timestamp" feature_names: "uih_seq__action_timestamp" group_type: JAGGED_SEQUENCE }
    feature_groups { group_name: "query_time" feature_names: "request_time" group_type: DEEP }
    hstu_match {
      user_tower {
        input: "uih"
        hstu {
          stu { embedding_dim: 4 num_heads: 2 hidden_dim: 3 attention_dim: 2 output_dropout_ratio: 0.0 }
          input_dropout_ratio: 0.0
          attn_num_layers: 2
          positional_encoder { num_position_buckets: 16 num_time_buckets: 8 use_time_encoding: true }
          input_preprocessor { uih_preprocessor {} }
          output_postprocessor { l2norm_postprocessor {} }
          )pb" + hstu_extra + R"pb(
        }
        max_seq_len: 10
      }
      item_tower { input: "candidate" mlp { hidden_units: [5] } }
      output_dim: 3
      similarity: COSINE
      temperature: 0.5
      )pb" + model_extra + R"pb(
    }
    losses { softmax_cross_entropy {} }
    metrics { recall_at_k { top_k: 1 } }
  })pb";
}

std::vector<feature::FeatureInfo> features() {
  auto video = [](const std::string& name) {
    auto f = testing::sparse_feature(name, 20, 6);
    f.embedding_name = "video_id_emb";
    return f;
  };
  return {
      testing::sparse_feature("user_id", 10, 3),
      testing::sparse_feature("user_level", 5, 3),
      sequence_feature(video("uih_seq__video_id"), "uih_seq"),
      sequence_feature(testing::dense_feature("uih_seq__action_timestamp", 1), "uih_seq"),
      sequence_feature(video("cand_seq__video_id"), "cand_seq", /*sampled=*/true),
      testing::dense_feature("request_time", 1),
  };
}

// Three users: histories of 2, 0 and 3 items; 1, 2 and 1 positive candidates, then 3 sampled
// negatives in the last row (as the loader appends them).
sparse::Batch batch() {
  sparse::Batch b;
  b.batch_size = 3;
  b.sparse_features = make_kjt({"user_id", "user_level", "uih_seq__video_id", "cand_seq__video_id"},
                               {{{7}, {3}, {1}}, {{1}, {2}, {0}}, {{4, 5}, {}, {6, 7, 8}},
                                {{10}, {11, 12}, {13, 14, 15, 16}}});
  const auto lengths = [](std::vector<int64_t> v) { return torch::tensor(v, torch::kInt64); };
  b.sequence_lengths["uih_seq__video_id"] = lengths({2, 0, 3});
  b.sequence_lengths["uih_seq__action_timestamp"] = lengths({2, 0, 3});
  b.sequence_lengths["cand_seq__video_id"] = lengths({1, 2, 4});
  b.sequence_dense_features["uih_seq__action_timestamp"] =
      torch::tensor({1000.f, 4600.f, 200.f, 90000.f, 100000.f}).unsqueeze(1);
  b.dense_features = sparse::KeyedTensor({"request_time"}, {1}, torch::tensor({{5000.f}, {3000.f}, {120000.f}}));
  b.candidate_pos_lengths = lengths({1, 2, 1});
  b.jagged_label_values["cand_seq__action_weight"] = torch::tensor({1.f, 2.f, 1.f, 4.f});
  b.jagged_label_lengths["cand_seq__action_weight"] = lengths({1, 2, 1});
  return b;
}

std::shared_ptr<HSTUMatch> build(const std::string& text, const std::string& tower = "") {
  auto cfg = parse_config(text);
  std::vector<std::string> labels(cfg.data_config().label_fields().begin(), cfg.data_config().label_fields().end());
  return std::make_shared<HSTUMatch>(cfg.model_config(), features(), labels, std::vector<std::string>{}, tower);
}

TEST(HSTUMatch, MatchesThePythonReference) {
  // Expected values: /usr/bin/python3 src/models/match/hstu_match_reference.py
  auto model = build(config());
  model->train();
  testing::set_reference_parameters(*model);
  const sparse::Batch b = batch();
  auto predictions = model->predict(b);
  const torch::Tensor sim = predictions.at("similarity");
  ASSERT_EQ(sim.sizes(), (std::vector<int64_t>{4, 4}));  // 4 positives × (itself + 3 negatives)
  const std::vector<float> want_sim = {1.03418720f, 0.58771103f, 1.03595594f, 0.89503948f, 1.35060964f, 1.38794519f,
                                       1.68263368f, 1.38377724f, 1.64796611f, 1.38794519f, 1.68263368f, 1.38377724f,
                                       0.37907953f, 0.13717501f, 0.62939065f, 0.27353332f};
  EXPECT_TRUE(torch::allclose(sim.reshape(-1), torch::tensor(want_sim), 1e-5, 2e-5)) << sim;
  auto losses = model->loss(predictions, b);
  const torch::Tensor loss = losses.at("softmax_cross_entropy");
  EXPECT_NEAR(loss.item<double>(), 1.35121087, 2e-5);
  loss.backward();
  const std::map<std::string, double> want = {
      {"item_tower.mlp.mlp.0.perceptron.0.bias", 0.01921069},
      {"item_tower.mlp.mlp.0.perceptron.0.weight", -0.15286902},
      {"item_tower.output.bias", 0.00949947},
      {"item_tower.output.weight", -0.00681906},
      {"user_tower._hstu_encoder._input_preprocessor._batched_contextual_linear_bias", -0.00292060},
      {"user_tower._hstu_encoder._input_preprocessor._batched_contextual_linear_weights", -0.00207781},
      {"user_tower._hstu_encoder._input_preprocessor._input_projection.bias", -0.02659361},
      {"user_tower._hstu_encoder._input_preprocessor._input_projection.weight", 0.00733456},
      {"user_tower._hstu_encoder._positional_encoder._position_embeddings_weight", -0.00038460},
      {"user_tower._hstu_encoder._positional_encoder._timestamp_embeddings_weight", 0.01812921},
      {"user_tower._hstu_encoder._stu_module._stu_layers.0._input_norm_bias", 0.00585894},
      {"user_tower._hstu_encoder._stu_module._stu_layers.0._input_norm_weight", 0.00019890},
      {"user_tower._hstu_encoder._stu_module._stu_layers.0._output_norm_bias", 0.00087137},
      {"user_tower._hstu_encoder._stu_module._stu_layers.0._output_norm_weight", 0.00134090},
      {"user_tower._hstu_encoder._stu_module._stu_layers.0._output_weight", 0.00312916},
      {"user_tower._hstu_encoder._stu_module._stu_layers.0._uvqk_beta", -0.00564571},
      {"user_tower._hstu_encoder._stu_module._stu_layers.0._uvqk_weight", 0.01089692},
      {"user_tower._hstu_encoder._stu_module._stu_layers.1._input_norm_bias", -0.00117122},
      {"user_tower._hstu_encoder._stu_module._stu_layers.1._input_norm_weight", 0.00010826},
      {"user_tower._hstu_encoder._stu_module._stu_layers.1._output_norm_bias", -0.00008006},
      {"user_tower._hstu_encoder._stu_module._stu_layers.1._output_norm_weight", 0.00074944},
      {"user_tower._hstu_encoder._stu_module._stu_layers.1._output_weight", 0.00014047},
      {"user_tower._hstu_encoder._stu_module._stu_layers.1._uvqk_beta", 0.00156772},
      {"user_tower._hstu_encoder._stu_module._stu_layers.1._uvqk_weight", -0.00205891},
      {"user_tower.output.bias", 0.00486673},
      {"user_tower.output.weight", 0.01145852},
      {"sequence.video_id_emb", -0.10068984},
      {"user_id_emb", -0.00003174},
      {"user_level_emb", -0.00268363},
  };
  testing::expect_gradient_checksums(*model, want);
}

// Each row's history reversed (its items newest first), the rest of the batch unchanged.
sparse::Batch descending(const sparse::Batch& b) {
  sparse::Batch out = b;
  out.sparse_features = make_kjt({"user_id", "user_level", "uih_seq__video_id", "cand_seq__video_id"},
                                 {{{7}, {3}, {1}}, {{1}, {2}, {0}}, {{5, 4}, {}, {8, 7, 6}},
                                  {{10}, {11, 12}, {13, 14, 15, 16}}});
  out.sequence_dense_features["uih_seq__action_timestamp"] =
      torch::tensor({4600.f, 1000.f, 100000.f, 90000.f, 200.f}).unsqueeze(1);
  return out;
}

TEST(HSTUMatch, DescendingHistoriesAreReadOldestFirst) {
  // sequence_timestamp_is_ascending: false on newest-first histories scores as true does on the
  // same histories oldest first (TorchEasyRec flips the grouped inputs, then the users back).
  auto asc = build(config());
  auto desc = build(config("sequence_timestamp_is_ascending: false"));
  testing::set_reference_parameters(*asc);
  testing::set_reference_parameters(*desc);
  asc->eval();
  desc->eval();
  const auto a = asc->predict(batch()).at("similarity");
  const auto d = desc->predict(descending(batch())).at("similarity");
  EXPECT_TRUE(torch::allclose(a, d, 1e-5, 1e-6)) << a << d;
}

TEST(HSTUMatch, EmptyHistoryWithoutContextGivesZeroUserEmbedding) {
  // TorchEasyRec's HSTUMatchEncoder masks a row without items to zeros; with no contextual group
  // and no output layer nothing moves it (COSINE keeps a zero vector zero).
  std::string text = config();
  text.replace(text.find("feature_groups { group_name: \"contextual\""),
               std::string("feature_groups { group_name: \"contextual\" feature_names: [\"user_id\", \"user_level\"] "
                           "group_type: DEEP }")
                   .size(),
               "");
  text.replace(text.find("output_dim: 3"), std::string("output_dim: 3").size(), "");
  auto user = build(text, MatchModel::kUserTower);
  user->eval();
  const auto emb = user->predict(batch()).at("user_tower_emb");
  ASSERT_EQ(emb.sizes(), (std::vector<int64_t>{3, 4}));
  EXPECT_TRUE(torch::equal(emb[1], torch::zeros({4})));
  EXPECT_GT(emb[0].abs().sum().item<double>(), 0);
  EXPECT_NEAR(emb[2].norm().item<double>(), 1.0, 1e-5);
}

TEST(HSTUMatch, TowersAloneHaveTheirOwnParametersAndOutputs) {
  auto whole = build(config());
  auto user = build(config(), MatchModel::kUserTower);
  auto item = build(config(), MatchModel::kItemTower);
  auto names = [](Model& m) {
    std::set<std::string> out;
    for (const auto& [k, v] : m.dense_parameters()) out.insert(k);
    for (const auto& t : m.embedding_tables()) out.insert(t.name);
    return out;
  };
  std::set<std::string> both = names(*user);
  for (const auto& n : names(*item)) both.insert(n);
  EXPECT_EQ(both, names(*whole));  // the towers' parameters are the model's, by the same names
  for (const auto& n : names(*item)) EXPECT_TRUE(n.rfind("item_tower.", 0) == 0 || n == "sequence.video_id_emb") << n;
  EXPECT_EQ(names(*user).count("item_tower.output.weight"), 0u);
}

TEST(HSTUMatch, ItemPackageEmbedsPlainFeatures) {
  // The item package's config: the candidate sub-feature as a plain feature of the same name and
  // table, default_value the sequence's "0" (TorchEasyRec's scalar projection).
  auto cfg = parse_config(R"pb(
    feature_configs { sequence_feature { sequence_name: "cand_seq" sequence_length: 10 sequence_delim: "|"
      features { id_feature { feature_name: "video_id" expression: "item:video_id" embedding_name: "video_id_emb"
                              embedding_dim: 6 num_buckets: 20 } } } }
    model_config {
      feature_groups { group_name: "candidate" feature_names: "cand_seq__video_id" group_type: JAGGED_SEQUENCE }
    })pb");
  const auto out = HSTUMatch::item_package_config(cfg);
  ASSERT_EQ(out.feature_configs_size(), 1);
  ASSERT_TRUE(out.feature_configs(0).has_id_feature());
  const auto& f = out.feature_configs(0).id_feature();
  EXPECT_EQ(f.feature_name(), "video_id");
  EXPECT_EQ(f.expression(), "item:video_id");
  EXPECT_EQ(f.embedding_name(), "video_id_emb");
  EXPECT_EQ(f.default_value(), "0");
  EXPECT_EQ(out.model_config().feature_groups(0).feature_names(0), "video_id");
}

TEST(HSTUMatch, ItemTowerAloneEmbedsOneItemPerRow) {
  // Built from the training config it reads the candidates' items; from the package's, plain ones.
  EXPECT_FALSE(build(config(), MatchModel::kItemTower)->dense_parameters().empty());
  // The item package's batch: the candidates as a plain feature (the group's ".query").
  std::vector<feature::FeatureInfo> plain = {testing::sparse_feature("video_id", 20, 6)};
  plain[0].embedding_name = "video_id_emb";
  auto cfg = parse_config(config());
  cfg.mutable_model_config()->mutable_feature_groups(2)->set_feature_names(0, "video_id");
  HSTUMatch model(cfg.model_config(), plain, {"cand_seq__action_weight"}, {}, MatchModel::kItemTower);
  sparse::Batch b;
  b.batch_size = 2;
  b.sparse_features = make_kjt({"video_id"}, {{{3}, {9}}});
  model.eval();
  const auto emb = model.predict(b).at("item_tower_emb");
  ASSERT_EQ(emb.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_NEAR(emb[0].norm().item<double>(), 1.0, 1e-5);
}

TEST(HSTUMatch, ConfigErrors) {
  auto error = [](const std::string& text, std::vector<std::string> weights = {}) {
    return error_of([&] {
      auto cfg = parse_config(text);
      HSTUMatch m(cfg.model_config(), features(), {"cand_seq__action_weight"}, std::move(weights));
    });
  };
  EXPECT_NE(error(config("in_batch_negative: true")).find("model_config.hstu_match.in_batch_negative"),
            std::string::npos);
  EXPECT_NE(error(config(), {"w"}).find("sample_weight"), std::string::npos);
  std::string ctx = config();
  ctx.replace(ctx.find("uih_preprocessor {}"), std::string("uih_preprocessor {}").size(),
              "contextual_preprocessor { content_encoder { slice_content_encoder {} } content_mlp { simple_mlp { "
              "hidden_dim: 4 } } }");
  EXPECT_NE(error(ctx).find("model_config.hstu_match.user_tower.hstu.input_preprocessor: hstu_match encodes the "
                            "user history alone"),
            std::string::npos)
      << error(ctx);
  // Groups no tower reads.
  std::string extra = config();
  extra.replace(extra.find("hstu_match {"), 12,
                "feature_groups { group_name: \"other\" feature_names: \"user_id\" group_type: DEEP }\n    hstu_match {");
  EXPECT_NE(error(extra).find("model_config.feature_groups[5].group_name: hstu_match reads no group 'other'"),
            std::string::npos)
      << error(extra);
  std::string jagged_time = config();
  jagged_time.replace(jagged_time.find("group_name: \"query_time\" feature_names: \"request_time\" group_type: DEEP"),
                      std::string("group_name: \"query_time\" feature_names: \"request_time\" group_type: DEEP").size(),
                      "group_name: \"query_time\" feature_names: \"uih_seq__action_timestamp\" group_type: JAGGED_SEQUENCE");
  EXPECT_NE(error(jagged_time).find("model_config.feature_groups[4].group_type: hstu_match group 'query_time' must be DEEP"),
            std::string::npos)
      << error(jagged_time);
  // No sampled candidate feature: the model cannot train.
  auto unsampled = features();
  unsampled[4].sampled = false;
  const std::string e = error_of([&] {
    auto cfg = parse_config(config());
    HSTUMatch m(cfg.model_config(), unsampled, {"cand_seq__action_weight"}, {});
  });
  EXPECT_NE(e.find("negative_sampler"), std::string::npos) << e;
}

}  // namespace hstu_match_test

}  // namespace tzrec::models
