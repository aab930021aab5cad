// MMoE and TaskTower vs the same math written with plain ops on the modules' own parameters.
#include "nn/mmoe.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "nn/testing.h"
#include "nn/task_tower.h"

namespace tzrec::nn {
namespace mmoe_test {

using testing::names;
using testing::relu_mlp;

// relu(x W0ᵀ + b0) ... for an MLP of plain ReLU layers, from its parameters.
torch::Tensor plain_mlp(const torch::nn::Module& m, const std::string& prefix, int layers, torch::Tensor x) {
  auto p = m.named_parameters();
  for (int i = 0; i < layers; ++i) {
    const std::string l = prefix + "mlp." + std::to_string(i) + ".perceptron.0.";
    x = torch::relu(x.matmul(p[l + "weight"].t()) + p[l + "bias"]);
  }
  return x;
}

TEST(MMoE, StateDictNamesFollowTzrec) {
  MMoE mmoe(5, relu_mlp({4}), 2, 2, relu_mlp({3}));
  EXPECT_EQ(mmoe->output_dim(), 4);
  EXPECT_EQ(names(mmoe->named_parameters()),
            (std::vector<std::string>{
                "expert_mlps.0.mlp.0.perceptron.0.weight", "expert_mlps.0.mlp.0.perceptron.0.bias",
                "expert_mlps.1.mlp.0.perceptron.0.weight", "expert_mlps.1.mlp.0.perceptron.0.bias",
                "gate_mlps.0.mlp.0.perceptron.0.weight", "gate_mlps.0.mlp.0.perceptron.0.bias",
                "gate_mlps.1.mlp.0.perceptron.0.weight", "gate_mlps.1.mlp.0.perceptron.0.bias",
                "gate_finals.0.weight", "gate_finals.0.bias", "gate_finals.1.weight", "gate_finals.1.bias"}));
  EXPECT_EQ(mmoe->named_parameters()["gate_finals.0.weight"].sizes(), (std::vector<int64_t>{2, 3}));
  MMoE no_gate(5, relu_mlp({4}), 3, 1, std::nullopt);
  EXPECT_EQ(no_gate->named_parameters()["gate_finals.0.weight"].sizes(), (std::vector<int64_t>{3, 5}));
}

void expect_matches_plain_ops(bool gate_mlp) {
  torch::manual_seed(3);
  const int64_t experts = 3, tasks = 2;
  MMoE mmoe(5, relu_mlp({6, 4}), experts, tasks, gate_mlp ? std::optional<MLPOptions>(relu_mlp({3})) : std::nullopt);
  auto x = torch::randn({7, 5}, torch::requires_grad());
  auto out = mmoe->forward(x);
  ASSERT_EQ(out.size(), 2u);
  auto p = mmoe->named_parameters();
  std::vector<torch::Tensor> expert_out;
  for (int e = 0; e < experts; ++e) {
    expert_out.push_back(plain_mlp(*mmoe, "expert_mlps." + std::to_string(e) + ".", 2, x));  // [B, 4]
  }
  torch::Tensor total;
  for (int t = 0; t < tasks; ++t) {
    const std::string ts = std::to_string(t);
    torch::Tensor g = gate_mlp ? plain_mlp(*mmoe, "gate_mlps." + ts + ".", 1, x) : x;
    torch::Tensor logits = g.matmul(p["gate_finals." + ts + ".weight"].t()) + p["gate_finals." + ts + ".bias"];
    torch::Tensor gate = logits.exp() / logits.exp().sum(1, true);  // [B, E]
    torch::Tensor want = torch::zeros({7, 4});
    for (int e = 0; e < experts; ++e) want = want + gate.select(1, e).unsqueeze(1) * expert_out[e];
    ASSERT_EQ(out[t].sizes(), want.sizes());
    EXPECT_TRUE(torch::allclose(out[t], want, 1e-5, 1e-6)) << "task " << t;
    // Gradients flow into every expert and into this task's gate.
    total = t == 0 ? out[t].sum() * 1.5 : total + out[t].pow(2).sum();
  }
  total.backward();
  EXPECT_GT(x.grad().abs().sum().item<double>(), 0.0);
  for (const auto& item : mmoe->named_parameters()) {
    if (item.key().find(".bias") != std::string::npos) continue;  // ReLU can zero a bias gradient
    EXPECT_TRUE(item.value().grad().defined() && item.value().grad().abs().sum().item<double>() > 0) << item.key();
  }
}

TEST(MMoE, MatchesPlainOpsWithoutGateMlp) { expect_matches_plain_ops(false); }
TEST(MMoE, MatchesPlainOpsWithGateMlp) { expect_matches_plain_ops(true); }

TEST(MMoE, RejectsBadSizes) {
  EXPECT_THROW(MMoE(5, relu_mlp({4}), 0, 2, std::nullopt, "model_config.mmoe"), ConfigError);
  EXPECT_THROW(MMoE(5, relu_mlp({4}), 2, 0, std::nullopt, "model_config.mmoe"), ConfigError);
  try {
    MMoE(5, relu_mlp({}), 2, 1, std::nullopt, "model_config.mmoe");
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model_config.mmoe.expert_mlp"), std::string::npos) << e.what();
  }
}

TEST(TaskTower, MlpThenLinear) {
  torch::manual_seed(5);
  TaskTower tower(4, 2, relu_mlp({3}));
  EXPECT_EQ(names(tower->named_parameters()),
            (std::vector<std::string>{"tower_mlp.mlp.0.perceptron.0.weight", "tower_mlp.mlp.0.perceptron.0.bias",
                                      "linear.weight", "linear.bias"}));
  auto x = torch::randn({6, 4});
  auto p = tower->named_parameters();
  auto want = plain_mlp(*tower, "tower_mlp.", 1, x).matmul(p["linear.weight"].t()) + p["linear.bias"];
  EXPECT_TRUE(torch::allclose(tower->forward(x), want, 1e-5, 1e-6));

  TaskTower bare(4, 1, std::nullopt);
  EXPECT_EQ(names(bare->named_parameters()), (std::vector<std::string>{"linear.weight", "linear.bias"}));
  auto q = bare->named_parameters();
  EXPECT_TRUE(torch::allclose(bare->forward(x), x.matmul(q["linear.weight"].t()) + q["linear.bias"], 1e-5, 1e-6));
}

}  // namespace mmoe_test
}  // namespace tzrec::nn
