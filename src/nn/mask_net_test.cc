#include "nn/mask_net.h"

#include <map>

#include <gtest/gtest.h>

#include "base/error.h"
#include "nn/autocast.h"
#include "nn/testing.h"

namespace tzrec::nn {
namespace mask_net_test {

using Params = std::map<std::string, torch::Tensor>;

// Detached copies of a module's parameters that require grad (for the reference computation).
Params copies(torch::nn::Module& m) {
  Params out;
  for (const auto& item : m.named_parameters()) out[item.key()] = item.value().detach().clone().requires_grad_(true);
  return out;
}

torch::Tensor lin(const torch::Tensor& x, Params& p, const std::string& name) {
  return torch::matmul(x, p[name + ".weight"].t()) + p[name + ".bias"];
}

torch::Tensor ln(const torch::Tensor& x, Params& p, const std::string& name) {
  return torch::layer_norm(x, {x.size(-1)}, p[name + ".weight"], p[name + ".bias"], 1e-5);
}

// TorchEasyRec's MaskBlock.forward with plain ops.
torch::Tensor ref_block(const torch::Tensor& feature, const torch::Tensor& mask, Params& p, const std::string& pre) {
  torch::Tensor weights = lin(torch::relu(lin(mask, p, pre + "mask_generator.0")), p, pre + "mask_generator.2");
  return torch::relu(ln(lin(feature * weights, p, pre + "ffn.0"), p, pre + "ffn.1"));
}

// TorchEasyRec's MaskNetModule.forward with plain ops.
torch::Tensor ref_module(const torch::Tensor& x, Params& p, int n, bool parallel, int top_layers) {
  torch::Tensor l = ln(x, p, "ln_emb");
  torch::Tensor h;
  if (parallel) {
    std::vector<torch::Tensor> outs;
    for (int i = 0; i < n; ++i) outs.push_back(ref_block(l, x, p, "mask_blocks." + std::to_string(i) + "."));
    h = torch::cat(outs, -1);
  } else {
    h = ref_block(l, x, p, "mask_blocks.0.");
    for (int i = 1; i < n; ++i) h = ref_block(h, x, p, "mask_blocks." + std::to_string(i) + ".");
  }
  for (int j = 0; j < top_layers; ++j) h = torch::relu(lin(h, p, "top_mlp.mlp." + std::to_string(j) + ".perceptron.0"));
  return h;
}

MaskNetOptions options(int n, bool parallel, std::vector<int64_t> top) {
  MaskNetOptions o;
  o.n_mask_blocks = n;
  o.use_parallel = parallel;
  o.mask_block.reduction_ratio = 0.5;
  o.mask_block.hidden_dim = 4;
  if (!top.empty()) o.top_mlp = testing::relu_mlp(std::move(top));
  return o;
}

TEST(MaskNetModule, ParameterNamesAsTorchEasyRec) {
  MaskNetModule m(6, options(2, true, {3}));
  EXPECT_EQ(testing::names(m->named_parameters()),
            (std::vector<std::string>{
                "ln_emb.weight", "ln_emb.bias",
                "mask_blocks.0.mask_generator.0.weight", "mask_blocks.0.mask_generator.0.bias",
                "mask_blocks.0.mask_generator.2.weight", "mask_blocks.0.mask_generator.2.bias",
                "mask_blocks.0.ffn.0.weight", "mask_blocks.0.ffn.0.bias", "mask_blocks.0.ffn.1.weight",
                "mask_blocks.0.ffn.1.bias",
                "mask_blocks.1.mask_generator.0.weight", "mask_blocks.1.mask_generator.0.bias",
                "mask_blocks.1.mask_generator.2.weight", "mask_blocks.1.mask_generator.2.bias",
                "mask_blocks.1.ffn.0.weight", "mask_blocks.1.ffn.0.bias", "mask_blocks.1.ffn.1.weight",
                "mask_blocks.1.ffn.1.bias",
                "top_mlp.mlp.0.perceptron.0.weight", "top_mlp.mlp.0.perceptron.0.bias"}));
  auto p = m->named_parameters();
  EXPECT_EQ(p["mask_blocks.0.mask_generator.0.weight"].sizes(), (std::vector<int64_t>{3, 6}));  // agg 6 × 0.5
  EXPECT_EQ(p["mask_blocks.0.mask_generator.2.weight"].sizes(), (std::vector<int64_t>{6, 3}));
  EXPECT_EQ(p["mask_blocks.1.ffn.0.weight"].sizes(), (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(p["top_mlp.mlp.0.perceptron.0.weight"].sizes(), (std::vector<int64_t>{3, 8}));  // 2 blocks × 4
  EXPECT_EQ(m->output_dim(), 3);
}

TEST(MaskNetModule, SerialBlocksReadThePreviousBlock) {
  MaskNetModule m(6, options(3, false, {}));
  EXPECT_EQ(m->output_dim(), 4);
  auto p = m->named_parameters();
  // Block 1 masks block 0's [B, 4] output, its mask generated from the [B, 6] input; agg = int(4 × 0.5).
  EXPECT_EQ(p["mask_blocks.1.mask_generator.0.weight"].sizes(), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(p["mask_blocks.1.mask_generator.2.weight"].sizes(), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(p["mask_blocks.1.ffn.0.weight"].sizes(), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(p.find("top_mlp.mlp.0.perceptron.0.weight"), nullptr);
}

// Values and gradients (input and every parameter) against the plain-op formula, for parallel and
// serial blocks, with and without a top MLP.
TEST(MaskNetModule, MatchesPlainOpsWithGradients) {
  for (bool parallel : {true, false}) {
    for (bool top : {false, true}) {
      torch::manual_seed(parallel * 2 + top);
      MaskNetModule m(6, options(3, parallel, top ? std::vector<int64_t>{5, 2} : std::vector<int64_t>{}));
      m->to(torch::kFloat64);
      {  // LayerNorm starts at weight 1, bias 0; perturb so that the affine part is tested too.
        torch::NoGradGuard g;
        for (auto& p : m->parameters()) p.add_(torch::randn_like(p) * 0.1);
      }
      auto x = torch::randn({5, 6}, torch::kFloat64).requires_grad_(true);
      auto y = m->forward(x);
      auto g = torch::randn_like(y);
      (y * g).sum().backward();

      Params p = copies(*m);
      auto x2 = x.detach().clone().requires_grad_(true);
      auto want = ref_module(x2, p, 3, parallel, top ? 2 : 0);
      (want * g).sum().backward();
      const std::string what = std::string(parallel ? "parallel" : "serial") + (top ? " + top_mlp" : "");
      ASSERT_EQ(y.sizes(), want.sizes()) << what;
      EXPECT_TRUE(torch::allclose(y, want, 1e-10, 1e-12)) << what;
      EXPECT_TRUE(torch::allclose(x.grad(), x2.grad(), 1e-10, 1e-12)) << what;
      for (const auto& item : m->named_parameters()) {
        ASSERT_TRUE(item.value().grad().defined()) << what << " " << item.key();
        EXPECT_TRUE(torch::allclose(item.value().grad(), p[item.key()].grad(), 1e-9, 1e-12)) << what << " " << item.key();
      }
    }
  }
}

// Under BF16 autocast (train_config.mixed_precision) the GEMMs run in bf16 and the LayerNorms in
// fp32 (CUDA autocast's policy; libtorch's CPU autocast alone would fail on them).
TEST(MaskNetModule, RunsUnderBf16Autocast) {
  torch::manual_seed(2);
  MaskNetModule m(6, options(2, false, {3}));
  auto x = torch::randn({5, 6});
  auto want = m->forward(x).detach();
  torch::Tensor y;
  {
    AutocastGuard guard(c10::ScalarType::BFloat16);
    y = m->forward(x);
  }
  EXPECT_TRUE(torch::allclose(y.to(torch::kFloat32), want, 0.05, 0.05)) << y << want;
  y.to(torch::kFloat32).sum().backward();
  for (const auto& item : m->named_parameters()) {
    ASSERT_TRUE(item.value().grad().defined()) << item.key();
    EXPECT_EQ(item.value().grad().scalar_type(), torch::kFloat32) << item.key();
  }
}

// The mask is instance-guided: zero mask weights zero the FFN input, so a block outputs
// relu(LayerNorm(bias)) whatever the input.
TEST(MaskBlock, HandComputedZeroMask) {
  MaskBlockOptions o;
  o.hidden_dim = 2;
  MaskBlock block(3, 3, o);
  EXPECT_EQ(block->aggregation_dim(), 3);
  {
    torch::NoGradGuard g;
    auto p = block->named_parameters();
    p["mask_generator.2.weight"].zero_();
    p["mask_generator.2.bias"].zero_();
    p["ffn.0.bias"].copy_(torch::tensor({1.0f, 3.0f}));
  }
  auto y = block->forward(torch::randn({2, 3}), torch::randn({2, 3}));
  // LayerNorm([1, 3]) = [-1, 1] (up to eps) → relu → [0, 1].
  EXPECT_TRUE(torch::allclose(y, torch::tensor({{0.0f, 1.0f}, {0.0f, 1.0f}}), 1e-4, 1e-4)) << y;
}

TEST(MaskBlock, ReductionRatioWinsOverAggregationDim) {
  MaskBlockOptions o;
  o.hidden_dim = 2;
  o.aggregation_dim = 7;
  o.reduction_ratio = 0.25;
  EXPECT_EQ(MaskBlock(10, 10, o)->aggregation_dim(), 2);  // int(10 × 0.25)
  o.reduction_ratio = 0.0;
  EXPECT_EQ(MaskBlock(10, 10, o)->aggregation_dim(), 7);
}

TEST(MaskNetModule, ConfigErrors) {
  auto message = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "(no error)";
  };
  const std::string p = "model_config.mask_net.mask_net_module";
  EXPECT_NE(message([&] { MaskNetModule(4, options(0, true, {}), p); }).find(p + ".n_mask_blocks: must be >= 1"),
            std::string::npos);
  auto no_hidden = options(1, true, {});
  no_hidden.mask_block.hidden_dim = 0;
  EXPECT_NE(message([&] { MaskNetModule(4, no_hidden, p); }).find(p + ".mask_block.hidden_dim: must be > 0"),
            std::string::npos);
  auto no_agg = options(1, true, {});
  no_agg.mask_block.reduction_ratio = 0.0;
  EXPECT_NE(message([&] { MaskNetModule(4, no_agg, p); }).find("set reduction_ratio or aggregation_dim"),
            std::string::npos);
  auto tiny = options(1, true, {});
  tiny.mask_block.reduction_ratio = 0.1;  // int(4 × 0.1) = 0
  EXPECT_NE(message([&] { MaskNetModule(4, tiny, p); }).find("aggregation dim must be > 0"), std::string::npos);
}

}  // namespace mask_net_test
}  // namespace tzrec::nn
