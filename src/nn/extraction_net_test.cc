// ExtractionNet vs the same gating written with plain ops on the module's own experts and gates.
#include "nn/extraction_net.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "nn/testing.h"

namespace tzrec::nn {
namespace extraction_net_test {

using testing::names;
using testing::relu_mlp;

torch::Tensor gate(const torch::OrderedDict<std::string, torch::Tensor>& p, const std::string& name,
                   const torch::Tensor& selector, const std::vector<torch::Tensor>& experts) {
  torch::Tensor logits = selector.matmul(p[name + ".weight"].t()) + p[name + ".bias"];  // [B, E]
  torch::Tensor w = logits.exp() / logits.exp().sum(1, true);
  torch::Tensor out = torch::zeros_like(experts[0]);
  for (size_t e = 0; e < experts.size(); ++e) out = out + w.select(1, static_cast<int64_t>(e)).unsqueeze(1) * experts[e];
  return out;
}

TEST(ExtractionNet, NamesAndGatingMatchPlainOps) {
  torch::manual_seed(6);
  // Two tasks with inputs of widths 5 and 3, shared input 4; 2 experts per task, 1 shared.
  ExtractionNet net(std::vector<int64_t>{5, 3}, 4, 1, 2, relu_mlp({6}), relu_mlp({6}), /*final_network=*/false, "ple");
  EXPECT_EQ(net->output_dim(), 6);
  auto p = net->named_parameters();
  EXPECT_EQ(names(p), (std::vector<std::string>{
                          "_shared_layers.0.mlp.0.perceptron.0.weight", "_shared_layers.0.mlp.0.perceptron.0.bias",
                          "_shared_gate.weight", "_shared_gate.bias",
                          "_task_layers.0.0.mlp.0.perceptron.0.weight", "_task_layers.0.0.mlp.0.perceptron.0.bias",
                          "_task_layers.0.1.mlp.0.perceptron.0.weight", "_task_layers.0.1.mlp.0.perceptron.0.bias",
                          "_task_layers.1.0.mlp.0.perceptron.0.weight", "_task_layers.1.0.mlp.0.perceptron.0.bias",
                          "_task_layers.1.1.mlp.0.perceptron.0.weight", "_task_layers.1.1.mlp.0.perceptron.0.bias",
                          "_task_gates.0.weight", "_task_gates.0.bias", "_task_gates.1.weight", "_task_gates.1.bias"}));
  EXPECT_EQ(p["_shared_gate.weight"].sizes(), (std::vector<int64_t>{5, 4}));  // 2 tasks × 2 + 1 shared
  EXPECT_EQ(p["_task_gates.1.weight"].sizes(), (std::vector<int64_t>{3, 3}));  // 2 own + 1 shared
  auto expert = [&](const std::string& prefix, const torch::Tensor& x) {
    return torch::relu(x.matmul(p[prefix + ".mlp.0.perceptron.0.weight"].t()) + p[prefix + ".mlp.0.perceptron.0.bias"]);
  };
  auto t0 = torch::randn({7, 5}), t1 = torch::randn({7, 3}), s = torch::randn({7, 4});
  auto [tasks, shared] = net->forward({t0, t1}, s);
  auto sh = expert("_shared_layers.0", s);
  std::vector<torch::Tensor> e0 = {expert("_task_layers.0.0", t0), expert("_task_layers.0.1", t0)};
  std::vector<torch::Tensor> e1 = {expert("_task_layers.1.0", t1), expert("_task_layers.1.1", t1)};
  EXPECT_TRUE(torch::allclose(tasks[0], gate(p, "_task_gates.0", t0, {e0[0], e0[1], sh}), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(tasks[1], gate(p, "_task_gates.1", t1, {e1[0], e1[1], sh}), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(shared, gate(p, "_shared_gate", s, {e0[0], e0[1], e1[0], e1[1], sh}), 1e-5, 1e-6));

  ExtractionNet last(std::vector<int64_t>{5, 3}, 4, 1, 2, relu_mlp({6}), relu_mlp({6}), /*final_network=*/true, "ple");
  EXPECT_EQ(last->named_parameters().find("_shared_gate.weight"), nullptr);
  EXPECT_FALSE(last->forward({t0, t1}, s).second.defined());
}

TEST(ExtractionNet, RejectsBadSizes) {
  EXPECT_THROW(ExtractionNet(std::vector<int64_t>{5}, 5, 1, 2, relu_mlp({6}), relu_mlp({4}), false, "ple"), ConfigError);
  EXPECT_THROW(ExtractionNet(std::vector<int64_t>{5}, 5, 1, 0, relu_mlp({6}), relu_mlp({6}), false, "ple"), ConfigError);
}

// share_num 0 (tzrec/modules/extraction_net.py with an empty _shared_layers): the task gates mix
// the task's own experts, the shared gate all task experts.
TEST(ExtractionNet, WithoutSharedExperts) {
  torch::manual_seed(7);
  ExtractionNet net(std::vector<int64_t>{5, 3}, 4, 0, 2, relu_mlp({6}), relu_mlp({6}), /*final_network=*/false, "ple");
  auto p = net->named_parameters();
  EXPECT_EQ(p.find("_shared_layers.0.mlp.0.perceptron.0.weight"), nullptr);
  EXPECT_EQ(p["_shared_gate.weight"].sizes(), (std::vector<int64_t>{4, 4}));  // 2 tasks × 2
  EXPECT_EQ(p["_task_gates.0.weight"].sizes(), (std::vector<int64_t>{2, 5}));
  auto expert = [&](const std::string& prefix, const torch::Tensor& x) {
    return torch::relu(x.matmul(p[prefix + ".mlp.0.perceptron.0.weight"].t()) + p[prefix + ".mlp.0.perceptron.0.bias"]);
  };
  auto t0 = torch::randn({7, 5}), t1 = torch::randn({7, 3}), s = torch::randn({7, 4});
  auto [tasks, shared] = net->forward({t0, t1}, s);
  std::vector<torch::Tensor> e0 = {expert("_task_layers.0.0", t0), expert("_task_layers.0.1", t0)};
  std::vector<torch::Tensor> e1 = {expert("_task_layers.1.0", t1), expert("_task_layers.1.1", t1)};
  EXPECT_TRUE(torch::allclose(tasks[0], gate(p, "_task_gates.0", t0, e0), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(tasks[1], gate(p, "_task_gates.1", t1, e1), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(shared, gate(p, "_shared_gate", s, {e0[0], e0[1], e1[0], e1[1]}), 1e-5, 1e-6));
}

}  // namespace extraction_net_test
}  // namespace tzrec::nn
