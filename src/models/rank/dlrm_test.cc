// DLRM: predictions against the formula written with plain libtorch ops on a real batch (dense MLP,
// pairwise dot products of [dense_out, sparse embeddings], TorchEasyRec's concat order), the
// single-group case, state-dict names, gradients and config errors.
#include "models/rank/dlrm.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"

namespace tzrec::models {
namespace dlrm_test {

using testing::dense_of;
using testing::error_of;
using testing::kIdsA;
using testing::kIdsB;
using testing::keys_of;
using testing::linear;
using testing::make_kjt;
using testing::parse_config;
using testing::pooled;
using testing::tables_of;

// Groups: dense [d0 (1), d1 (2)], sparse [a, b, c] (dim 3).
std::string config_text(bool arch_with_sparse) {
  return std::string(R"(
    model_config {
      feature_groups { group_name: "dense" feature_names: ["d0", "d1"] }
      feature_groups { group_name: "sparse" feature_names: ["a", "b", "c"] }
      dlrm {
        dense_mlp { hidden_units: [4, 3] }
        final { hidden_units: [5] }
        )") + (arch_with_sparse ? "" : "arch_with_sparse: false") + R"(
      }
      losses { binary_cross_entropy {} }
    })";
}

std::vector<feature::FeatureInfo> features() {
  return {testing::dense_feature("d0", 1), testing::dense_feature("d1", 2), testing::sparse_feature("a", 5, 3),
          testing::sparse_feature("b", 4, 3), testing::sparse_feature("c", 6, 3), testing::sparse_feature("e", 6, 2)};
}

// B = 3.
const std::vector<std::vector<int64_t>> kIdsC = {{5}, {0, 1}, {2}};
const std::vector<std::vector<int64_t>> kIdsE = {{1}, {2}, {3}};

sparse::Batch make_batch() {
  sparse::Batch batch;
  batch.batch_size = 3;
  batch.sparse_features = make_kjt({"a", "b", "c", "e"}, {kIdsA, kIdsB, kIdsC, kIdsE});
  batch.dense_features = sparse::KeyedTensor::from_tensors(
      {"d0", "d1"}, {torch::tensor({{0.5f}, {1.0f}, {-2.0f}}), torch::tensor({{1.0f, 2.0f}, {0.0f, -1.0f}, {3.0f, 0.5f}})});
  batch.labels["clk"] = torch::tensor({1.0f, 0.0f, 1.0f});
  return batch;
}

// Strict upper triangle of F Fᵀ, row-major, by explicit loops. f: [B, M, D] → [B, M(M−1)/2].
torch::Tensor pairwise_dots(const torch::Tensor& f) {
  std::vector<torch::Tensor> cols;
  for (int64_t i = 0; i < f.size(1); ++i) {
    for (int64_t j = i + 1; j < f.size(1); ++j) cols.push_back((f.select(1, i) * f.select(1, j)).sum(1));
  }
  return torch::stack(cols, 1);
}

TEST(DLRM, ForwardMatchesPlainOps) {
  for (bool arch_with_sparse : {true, false}) {
    torch::manual_seed(7);
    auto config = parse_config(config_text(arch_with_sparse));
    DLRM model(config.model_config(), features(), {"clk"}, {});
    model.eval();
    auto pred = model.predict(make_batch());

    auto t = tables_of(model);
    auto p = dense_of(model);
    torch::NoGradGuard g;
    auto ea = pooled(t["a_emb"], kIdsA), eb = pooled(t["b_emb"], kIdsB), ec = pooled(t["c_emb"], kIdsC);  // [3, 3]
    auto dense_in = torch::tensor({{0.5f, 1.0f, 2.0f}, {1.0f, 0.0f, -1.0f}, {-2.0f, 3.0f, 0.5f}});
    auto h = torch::relu(linear(dense_in, p, "dense_mlp.mlp.0.perceptron.0"));
    auto dense = torch::relu(linear(h, p, "dense_mlp.mlp.1.perceptron.0"));  // [3, 3]
    auto inter = pairwise_dots(torch::stack({dense, ea, eb, ec}, 1));         // [3, 6]
    std::vector<torch::Tensor> parts = {inter, dense};
    if (arch_with_sparse) parts.push_back(torch::cat({ea, eb, ec}, 1));
    auto f = torch::relu(linear(torch::cat(parts, 1), p, "final_mlp.mlp.0.perceptron.0"));
    auto y = linear(f, p, "output_mlp").squeeze(1);
    EXPECT_TRUE(torch::allclose(pred.at("logits"), y, 1e-5, 1e-5)) << arch_with_sparse << pred.at("logits") << y;
    EXPECT_TRUE(torch::allclose(pred.at("probs"), torch::sigmoid(y), 1e-5, 1e-5));
    EXPECT_EQ(p["final_mlp.mlp.0.perceptron.0.weight"].size(1), 6 + 3 + (arch_with_sparse ? 9 : 0));
  }
}

// One feature group, whatever its name, is the sparse group: interactions of its embeddings only.
TEST(DLRM, SingleGroupIsTheSparseGroup) {
  auto config = parse_config(R"(
    model_config {
      feature_groups { group_name: "all" feature_names: ["a", "b", "c"] }
      dlrm { final { hidden_units: [2] } }
      losses { l2_loss {} }
    })");
  torch::manual_seed(3);
  DLRM model(config.model_config(), features(), {"clk"}, {});
  model.eval();
  auto pred = model.predict(make_batch());
  auto t = tables_of(model);
  auto p = dense_of(model);
  EXPECT_EQ(p.count("dense_mlp.mlp.0.perceptron.0.weight"), 0u);
  torch::NoGradGuard g;
  auto ea = pooled(t["a_emb"], kIdsA), eb = pooled(t["b_emb"], kIdsB), ec = pooled(t["c_emb"], kIdsC);
  auto inter = pairwise_dots(torch::stack({ea, eb, ec}, 1));  // [3, 3]
  auto f = torch::relu(linear(torch::cat({inter, ea, eb, ec}, 1), p, "final_mlp.mlp.0.perceptron.0"));
  EXPECT_TRUE(torch::allclose(pred.at("y"), linear(f, p, "output_mlp").squeeze(1), 1e-5, 1e-5));
}

TEST(DLRM, ParameterNamesAsTorchEasyRec) {
  auto config = parse_config(config_text(true));
  DLRM model(config.model_config(), features(), {"clk"}, {});
  EXPECT_EQ(keys_of(model.dense_parameters()),
            (std::vector<std::string>{"dense_mlp.mlp.0.perceptron.0.weight", "dense_mlp.mlp.0.perceptron.0.bias",
                                      "dense_mlp.mlp.1.perceptron.0.weight", "dense_mlp.mlp.1.perceptron.0.bias",
                                      "final_mlp.mlp.0.perceptron.0.weight", "final_mlp.mlp.0.perceptron.0.bias",
                                      "output_mlp.weight", "output_mlp.bias"}));
  EXPECT_EQ(model.named_buffers().size(), 0u);  // InteractionArch keeps no state
}

TEST(DLRM, GradientsReachEveryParameter) {
  torch::manual_seed(5);
  auto config = parse_config(config_text(true));
  DLRM model(config.model_config(), features(), {"clk"}, {});
  model.train();
  auto batch = make_batch();
  model.total_loss(model.loss(model.predict(batch), batch)).backward();
  testing::expect_gradients_everywhere(model);
}

TEST(DLRM, ConfigErrors) {
  auto err = [](const std::string& model_body) {
    auto config = parse_config("model_config { " + model_body + " losses { binary_cross_entropy {} } }");
    return error_of([&] { DLRM model(config.model_config(), features(), {"clk"}, {}); });
  };
  const std::string groups = R"(feature_groups { group_name: "dense" feature_names: ["d0"] }
                                feature_groups { group_name: "sparse" feature_names: ["a", "b"] } )";
  EXPECT_EQ(err(R"(feature_groups { group_name: "dense" feature_names: ["d0"] }
                   feature_groups { group_name: "emb" feature_names: ["a"] }
                   dlrm { dense_mlp { hidden_units: [3] } final { hidden_units: [2] } })"),
            "model_config.feature_groups: DLRM needs a feature group named 'sparse' (group_type: DEEP)");
  EXPECT_EQ(err(R"(feature_groups { group_name: "dense" feature_names: ["d0"] }
                   feature_groups { group_name: "sparse" feature_names: ["a", "e"] }
                   dlrm { dense_mlp { hidden_units: [3] } final { hidden_units: [2] } })"),
            "model_config.feature_groups[1].feature_names[1]: DLRM's sparse group needs equal embedding_dim: 'e' has 2, "
            "'a' has 3");
  EXPECT_EQ(err(groups + "dlrm { dense_mlp { hidden_units: [4] } final { hidden_units: [2] } }"),
            "model_config.dlrm.dense_mlp.hidden_units: the last hidden unit must equal the embedding dimension of "
            "the 'sparse' group (3), got 4");
  EXPECT_NE(err(groups + "dlrm { final { hidden_units: [2] } }").find("model_config.dlrm.dense_mlp: required"),
            std::string::npos);
  EXPECT_EQ(err(groups + "dlrm { dense_mlp { hidden_units: [3] } }"), "model_config.dlrm.final: required");
  EXPECT_EQ(err(groups + "dlrm { dense_mlp { hidden_units: [3] } final { hidden_units: [0] } }"),
            "model_config.dlrm.final.hidden_units[0]: must be > 0, got 0");
}

TEST(DLRM, CreatedByTheFactory) {
  auto config = parse_config("data_config { label_fields: 'clk' } " + config_text(true));
  auto model = create_model(config, features());
  EXPECT_NE(std::dynamic_pointer_cast<DLRM>(model), nullptr);
}

}  // namespace dlrm_test
}  // namespace tzrec::models
