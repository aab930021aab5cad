// EmbeddingGroup with sequence groups nested in a DEEP group and the encoders appended to it
// (docs/tzrec-compatibility.md §5.9). The encoder here is a test module (mean of the valid steps,
// then a Linear); expected values are computed from the group's own outputs and weights with
// plain tensor ops, and the config rules are TorchEasyRec's EmbeddingGroup checks.
#include <gtest/gtest.h>

#include "base/error.h"
#include "embedding/embedding_group.h"
#include "embedding/testing_tensors.h"

namespace tzrec::embedding {
namespace embedding_group_sequence_encoders_test {

using testing::i64;

using Groups = std::vector<FeatureGroupConfig>;

FeatureSpec sparse(const std::string& name, int64_t rows, int64_t dim, bool sequence) {
  FeatureSpec f;
  f.name = name;
  f.num_embeddings = rows;
  f.embedding_dim = dim;
  f.is_sequence = sequence;
  f.value_dim = 1;
  return f;
}

// Mean of "<input>.sequence" over its first "<input>.sequence_length" steps, then proj (D → 3).
class MeanProjImpl : public torch::nn::Module {
 public:
  MeanProjImpl(std::string input, int64_t dim)
      : input_(std::move(input)), proj(register_module("proj", torch::nn::Linear(dim, 3))) {}
  torch::Tensor forward(const std::map<std::string, torch::Tensor>& grouped) {
    torch::Tensor seq = grouped.at(input_ + ".sequence");
    torch::Tensor len = grouped.at(input_ + ".sequence_length").clamp_min(1).unsqueeze(1).to(torch::kFloat32);
    return proj(seq.sum(1) / len);
  }
  std::string input_;
  torch::nn::Linear proj;
};
TORCH_MODULE(MeanProj);

struct Fixture {
  std::vector<FeatureSpec> features = {sparse("q", 10, 4, false), sparse("s__a", 10, 4, true),
                                       sparse("s__b", 10, 4, true)};
  sparse::Batch batch;
  std::vector<SequenceEncoderRequest> requests;  // what the factory was asked for

  Fixture() {
    // B = 3; q one id per row; histories s__a / s__b with 2, 0, 1 items.
    batch.batch_size = 3;
    batch.sparse_features = sparse::KeyedJaggedTensor::from_jagged(
        {"q", "s__a", "s__b"}, {{i64({1, 2, 3}), i64({1, 1, 1}), {}},
                                {i64({7, 8, 9}), i64({2, 0, 1}), {}},
                                {i64({4, 5, 6}), i64({2, 0, 1}), {}}});
    batch.sequence_lengths = {{"s__a", i64({2, 0, 1})}, {"s__b", i64({2, 0, 1})}};
  }

  SequenceEncoderFactory factory() {
    return [this](const SequenceEncoderRequest& r) {
      requests.push_back(r);
      MeanProj m(r.input, r.sequence_dim);
      return SequenceEncoderHandle{m.ptr(), [m](const std::map<std::string, torch::Tensor>& g) mutable {
                                     return m->forward(g);
                                   },
                                   3};
    };
  }

  EmbeddingGroup build(Groups groups) { return EmbeddingGroup(features, std::move(groups), 0, "", factory()); }
};

// One DEEP group "deep" of q with one unnamed sequence group {q, s__a} and one encoder.
FeatureGroupConfig deep_with_one_sequence_group() {
  FeatureGroupConfig g{"deep", GroupType::kDeep, {"q"}, "model_config.feature_groups[0]"};
  g.sequence_groups = {{"", {"q", "s__a"}, ""}};
  g.sequence_encoders = {{"", ""}};
  return g;
}

TEST(EmbeddingGroupSequenceEncoders, SingleUnnamedSequenceGroupTakesTheGroupsName) {
  Fixture fx;
  EmbeddingGroup g = fx.build({deep_with_one_sequence_group()});
  ASSERT_EQ(fx.requests.size(), 1u);
  EXPECT_EQ(fx.requests[0].group, "deep");
  EXPECT_EQ(fx.requests[0].index, 0u);
  EXPECT_EQ(fx.requests[0].input, "deep");
  EXPECT_EQ(fx.requests[0].path, "model_config.feature_groups[0].sequence_encoders[0]");
  EXPECT_EQ(fx.requests[0].query_dim, 4);
  EXPECT_EQ(fx.requests[0].sequence_dim, 4);
  EXPECT_EQ(g->group_total_dim("deep"), 4 + 3);
  EXPECT_EQ(g->group_feature_dims("deep"), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(g->group_names(), (std::vector<std::string>{"deep"}));

  // State-dict names of TorchEasyRec's EmbeddingGroup: the pooled table, the sequence group's own
  // tables (EmbeddingCollection per dim) and the encoders by group and position.
  std::vector<std::string> names;
  for (const auto& p : g->named_parameters()) names.push_back(p.key());
  EXPECT_EQ(names, (std::vector<std::string>{"emb_impls.__BASE__.ebc.embedding_bags.q_emb.weight",
                                             "seq_emb_impls.__BASE__.ec_dict.4.embeddings.q_emb.weight",
                                             "seq_emb_impls.__BASE__.ec_dict.4.embeddings.s__a_emb.weight",
                                             "_group_name_to_seq_encoders.deep.0.proj.weight",
                                             "_group_name_to_seq_encoders.deep.0.proj.bias"}));

  auto out = g->forward(fx.batch);
  for (const char* key : {"deep", "deep.query", "deep.sequence", "deep.sequence_length"}) {
    EXPECT_EQ(out.count(key), 1u) << key;
  }
  auto params = g->named_parameters();
  torch::Tensor pooled = params["emb_impls.__BASE__.ebc.embedding_bags.q_emb.weight"].detach().index_select(0, i64({1, 2, 3}));
  torch::Tensor items = params["seq_emb_impls.__BASE__.ec_dict.4.embeddings.s__a_emb.weight"].detach();
  // Mean of the valid steps: row 0 items 7, 8; row 1 none; row 2 item 9.
  torch::Tensor mean = torch::stack({(items[7] + items[8]) / 2, torch::zeros({4}), items[9]});
  torch::Tensor encoded = torch::nn::functional::linear(mean, params["_group_name_to_seq_encoders.deep.0.proj.weight"],
                                                         params["_group_name_to_seq_encoders.deep.0.proj.bias"]);
  torch::Tensor want = torch::cat({pooled, encoded.detach()}, 1);
  ASSERT_EQ(out.at("deep").sizes(), (std::vector<int64_t>{3, 7}));
  EXPECT_TRUE(torch::allclose(out.at("deep"), want, 1e-6, 1e-6)) << out.at("deep") << want;

  // Gradients reach the encoder and the sequence table (only the looked-up rows).
  out.at("deep").sum().backward();
  EXPECT_TRUE(params["_group_name_to_seq_encoders.deep.0.proj.weight"].grad().defined());
  torch::Tensor grad = params["seq_emb_impls.__BASE__.ec_dict.4.embeddings.s__a_emb.weight"].grad().to_dense();
  EXPECT_TRUE(torch::equal(grad.abs().sum(1).nonzero().flatten(), i64({7, 8, 9})));
}

TEST(EmbeddingGroupSequenceEncoders, SeveralNamedSequenceGroupsAndEncodersInOrder) {
  Fixture fx;
  FeatureGroupConfig g{"deep", GroupType::kDeep, {}, "model_config.feature_groups[0]"};  // no pooled features
  g.sequence_groups = {{"click", {"q", "s__a"}, ""}, {"buy", {"s__b"}, ""}};
  g.sequence_encoders = {{"buy", ""}, {"click", ""}, {"click", ""}};
  EmbeddingGroup eg = fx.build({g});
  ASSERT_EQ(fx.requests.size(), 3u);
  EXPECT_EQ(fx.requests[0].input, "buy");
  EXPECT_EQ(fx.requests[0].query_dim, 0);
  EXPECT_EQ(fx.requests[2].index, 2u);
  EXPECT_EQ(eg->group_feature_dims("deep"), (std::vector<int64_t>{3, 3, 3}));
  auto out = eg->forward(fx.batch);
  EXPECT_EQ(out.at("deep").sizes(), (std::vector<int64_t>{3, 9}));
  EXPECT_EQ(out.at("buy.sequence").sizes(), (std::vector<int64_t>{3, 2, 4}));
  EXPECT_EQ(out.count("buy.query"), 0u);
  EXPECT_EQ(out.at("click.query").sizes(), (std::vector<int64_t>{3, 4}));
}

TEST(EmbeddingGroupSequenceEncoders, ConfigErrors) {
  Fixture fx;
  auto err = [&](Groups groups) {
    try {
      fx.build(std::move(groups));
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string p = "model_config.feature_groups[0]";
  {
    FeatureGroupConfig g = deep_with_one_sequence_group();
    g.type = GroupType::kWide;
    EXPECT_EQ(err({g}), p + ".sequence_groups: group 'deep' is WIDE; sequence_groups and sequence_encoders belong in "
                            "a DEEP group");
  }
  {
    FeatureGroupConfig g = deep_with_one_sequence_group();
    g.sequence_encoders.clear();
    EXPECT_EQ(err({g}), p + ".sequence_encoders: group 'deep' has sequence_groups but no sequence_encoders; add one "
                            "per sequence group, e.g. sequence_encoders { din_encoder { attn_mlp { hidden_units: [64] "
                            "} } }");
  }
  {
    FeatureGroupConfig g = deep_with_one_sequence_group();
    g.sequence_groups.clear();
    EXPECT_EQ(err({g}), p + ".sequence_groups: group 'deep' has sequence_encoders but no sequence_groups for them to "
                            "read; add sequence_groups { feature_names: ... }");
  }
  {
    FeatureGroupConfig g = deep_with_one_sequence_group();
    g.sequence_groups = {{"click", {"s__a"}, ""}, {"", {"s__b"}, ""}};
    EXPECT_EQ(err({g}), p + ".sequence_groups[1].group_name: required when group 'deep' has several sequence_groups "
                            "(its sequence_encoders name them in input)");
  }
  {
    FeatureGroupConfig g = deep_with_one_sequence_group();
    g.sequence_groups = {{"click", {"s__a"}, ""}, {"buy", {"s__b"}, ""}};
    EXPECT_EQ(err({g}), p + ".sequence_encoders[0].input: required when group 'deep' has several sequence_groups; "
                            "name one of: click, buy");
    g.sequence_encoders = {{"click", ""}, {"cart", ""}};
    EXPECT_EQ(err({g}), p + ".sequence_encoders[1].input: 'cart' is not a sequence group of group 'deep'; use one "
                            "of: click, buy");
    g.sequence_encoders = {{"click", ""}};
    EXPECT_EQ(err({g}), p + ".sequence_groups[1]: sequence group 'buy' of group 'deep' has no sequence encoder; add a "
                            "sequence_encoders entry with input: \"buy\"");
  }
  {
    // Sequence group names are unique, also against SEQUENCE groups.
    FeatureGroupConfig g = deep_with_one_sequence_group();
    g.sequence_groups = {{"click", {"s__a"}, ""}};
    FeatureGroupConfig s{"click", GroupType::kSequence, {"s__b"}, "model_config.feature_groups[1]"};
    EXPECT_EQ(err({g, s}), p + ".sequence_groups[0].group_name: duplicate sequence group name 'click' (also "
                               "model_config.feature_groups[1]); sequence groups need distinct names");
  }
  {
    // Feature errors of a nested group name its path.
    FeatureGroupConfig g = deep_with_one_sequence_group();
    g.sequence_groups = {{"", {"q"}, ""}};
    EXPECT_EQ(err({g}), p + ".sequence_groups[0].feature_names: sequence group 'deep' has no sequence feature; add a "
                            "sequence_feature sub-feature or a sequence_* feature");
  }
}

}  // namespace embedding_group_sequence_encoders_test
}  // namespace tzrec::embedding
