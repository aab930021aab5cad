#include "nn/mlp.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "nn/autocast.h"
#include "nn/testing.h"

namespace tzrec::nn {
namespace mlp_test {

using testing::names;

void expect_close(const torch::Tensor& got, const torch::Tensor& want, double tol = 1e-6) {
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(torch::allclose(got, want, tol, tol)) << "got " << got << "\nwant " << want;
}

TEST(MLP, StateDictNamesPlain) {
  MLPOptions o;
  o.hidden_units = {4, 2};
  o.dropout_ratio = {0.5};
  MLP mlp(3, o);
  EXPECT_EQ(mlp->output_dim(), 2);
  EXPECT_EQ(names(mlp->named_parameters()),
            (std::vector<std::string>{"mlp.0.perceptron.0.weight", "mlp.0.perceptron.0.bias",
                                      "mlp.1.perceptron.0.weight", "mlp.1.perceptron.0.bias"}));
  EXPECT_EQ(mlp->named_parameters()["mlp.0.perceptron.0.weight"].sizes(), (std::vector<int64_t>{4, 3}));
  EXPECT_TRUE(mlp->named_buffers().is_empty());
}

TEST(MLP, StateDictNamesBatchNormDropsLinearBias) {
  MLPOptions o;
  o.hidden_units = {4};
  o.use_bn = true;
  MLP mlp(3, o);
  EXPECT_EQ(names(mlp->named_parameters()),
            (std::vector<std::string>{"mlp.0.perceptron.0.weight", "mlp.0.perceptron.1.weight",
                                      "mlp.0.perceptron.1.bias"}));
  EXPECT_EQ(names(mlp->named_buffers()),
            (std::vector<std::string>{"mlp.0.perceptron.1.running_mean", "mlp.0.perceptron.1.running_var",
                                      "mlp.0.perceptron.1.num_batches_tracked"}));
}

TEST(MLP, StateDictNamesLayerNormAndPReLU) {
  MLPOptions o;
  o.hidden_units = {5};
  o.use_ln = true;
  o.bias = false;
  o.activation = "nn.PReLU(num_parameters=5)";
  MLP mlp(2, o);
  EXPECT_EQ(names(mlp->named_parameters()),
            (std::vector<std::string>{"mlp.0.perceptron.0.weight", "mlp.0.perceptron.1.weight",
                                      "mlp.0.perceptron.1.bias", "mlp.0.perceptron.2.weight"}));
}

// Dice after a BatchNorm of a dim-3 layer: tzrec's Perceptron order Linear, Transpose, BatchNorm1d,
// Transpose, Dice (tzrec/modules/mlp.py, Perceptron.__init__), Dice sized by the layer's width.
TEST(MLP, StateDictNamesDice) {
  MLPOptions o;
  o.hidden_units = {4, 2};
  o.activation = "Dice";
  MLP mlp(3, o);
  EXPECT_EQ(names(mlp->named_parameters()),
            (std::vector<std::string>{"mlp.0.perceptron.0.weight", "mlp.0.perceptron.0.bias", "mlp.0.perceptron.1.alpha",
                                      "mlp.1.perceptron.0.weight", "mlp.1.perceptron.0.bias",
                                      "mlp.1.perceptron.1.alpha"}));
  EXPECT_EQ(mlp->named_parameters()["mlp.0.perceptron.1.alpha"].sizes(), (std::vector<int64_t>{4}));
  EXPECT_EQ(names(mlp->named_buffers()),
            (std::vector<std::string>{"mlp.0.perceptron.1.bn.running_mean", "mlp.0.perceptron.1.bn.running_var",
                                      "mlp.0.perceptron.1.bn.num_batches_tracked",
                                      "mlp.1.perceptron.1.bn.running_mean", "mlp.1.perceptron.1.bn.running_var",
                                      "mlp.1.perceptron.1.bn.num_batches_tracked"}));
  o.hidden_units = {4};
  o.use_bn = true;
  o.dim = 3;
  MLP mlp3(3, o);
  EXPECT_EQ(names(mlp3->named_parameters()),
            (std::vector<std::string>{"mlp.0.perceptron.0.weight", "mlp.0.perceptron.2.weight",
                                      "mlp.0.perceptron.2.bias", "mlp.0.perceptron.4.alpha"}));
  auto y = mlp3->forward(torch::randn({2, 5, 3}));
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{2, 5, 4}));
}

// Children of mlp.<layer>.perceptron, as type names.
std::vector<std::string> layer_children(MLP& mlp, int layer) {
  auto seq = mlp->named_children()["mlp"]->children()[layer]->children()[0];
  std::vector<std::string> out;
  for (const auto& c : seq->children()) out.push_back(c->name());
  return out;
}

double dropout_p(MLP& mlp, int layer) {
  auto seq = mlp->named_children()["mlp"]->children()[layer]->children()[0];
  auto last = seq->children().back();
  auto* d = last->as<torch::nn::DropoutImpl>();
  return d == nullptr ? -1.0 : d->options.p();
}

TEST(MLP, DropoutRatioBroadcastAndPerLayer) {
  MLPOptions o;
  o.hidden_units = {4, 3, 2};
  o.dropout_ratio = {0.25};
  MLP a(3, o);
  for (int i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(dropout_p(a, i), 0.25);
  o.dropout_ratio = {0.1, 0.0, 0.3};
  MLP b(3, o);
  EXPECT_DOUBLE_EQ(dropout_p(b, 0), 0.1);
  EXPECT_EQ(layer_children(b, 1), (std::vector<std::string>{"torch::nn::LinearImpl", "torch::nn::ReLUImpl"}));
  EXPECT_DOUBLE_EQ(dropout_p(b, 2), 0.3);
  o.dropout_ratio = {};
  MLP c(3, o);
  EXPECT_EQ(layer_children(c, 0), (std::vector<std::string>{"torch::nn::LinearImpl", "torch::nn::ReLUImpl"}));
  o.activation = "";
  MLP d(3, o);
  EXPECT_EQ(layer_children(d, 0), (std::vector<std::string>{"torch::nn::LinearImpl"}));
}

void set_weights(MLP& mlp) {
  torch::NoGradGuard g;
  auto p = mlp->named_parameters();
  p["mlp.0.perceptron.0.weight"].copy_((torch::arange(12.0).reshape({4, 3}) - 5) / 10);
  if (p.contains("mlp.0.perceptron.0.bias")) p["mlp.0.perceptron.0.bias"].copy_(torch::arange(4.0) / 10 - 0.1);
  if (p.contains("mlp.1.perceptron.0.weight")) {
    p["mlp.1.perceptron.0.weight"].copy_(((torch::arange(12.0).reshape({3, 4}) - 3) / 7).pow(2) - 0.5);
    p["mlp.1.perceptron.0.bias"].copy_(torch::tensor({0.05, -0.05, 0.2}));
  }
}

TEST(MLP, ForwardMatchesPlainOps) {
  MLPOptions o;
  o.hidden_units = {4, 3};
  o.activation = "nn.Tanh";
  MLP mlp(3, o);
  set_weights(mlp);
  auto x = torch::tensor({{1.0, 2.0, -1.0}, {0.5, -0.3, 0.2}});
  auto p = mlp->named_parameters();
  auto h = torch::tanh(torch::matmul(x, p["mlp.0.perceptron.0.weight"].t()) + p["mlp.0.perceptron.0.bias"]);
  auto y = torch::tanh(torch::matmul(h, p["mlp.1.perceptron.0.weight"].t()) + p["mlp.1.perceptron.0.bias"]);
  expect_close(mlp->forward(x), y);
}

// Reference values from /usr/bin/python3 (torch 1.13): nn.Sequential(Linear(3,4), LayerNorm(4),
// LeakyReLU(0.1), Linear(4,3), LayerNorm(3), LeakyReLU(0.1)) with the weights of set_weights().
TEST(MLP, LayerNormLeakyReLUMatchesPyTorch) {
  MLPOptions o;
  o.hidden_units = {4, 3};
  o.use_ln = true;
  o.activation = "nn.LeakyReLU(negative_slope=0.1)";
  MLP mlp(3, o);
  set_weights(mlp);
  auto x = torch::tensor({{1.0, 2.0, -1.0}, {0.5, -0.3, 0.2}});
  auto want = torch::tensor({{-0.09158530831336975, -0.047529056668281555, 1.391143798828125},
                             {-0.09158485382795334, -0.04752963408827782, 1.3911447525024414}});
  expect_close(mlp->forward(x), want, 1e-5);
}

// Reference from /usr/bin/python3: Sequential(Linear(3,4,bias=False), BatchNorm1d(4), ReLU()) in
// training mode (batch statistics) and the running statistics after one step.
TEST(MLP, BatchNormTrainModeMatchesPyTorch) {
  MLPOptions o;
  o.hidden_units = {4};
  o.use_bn = true;
  MLP mlp(3, o);
  set_weights(mlp);
  mlp->train();
  auto x = torch::tensor({{1.0, 2.0, -1.0}, {0.5, -0.3, 0.2}, {-1.0, 0.4, 0.9}});
  auto want = torch::tensor({{0.0, 0.0, 0.39196085929870605, 1.3651796579360962},
                             {0.40234068036079407, 0.14502045512199402, 0.0, 0.0},
                             {0.9729330539703369, 1.14566171169281, 0.9799025058746338, 0.0}});
  expect_close(mlp->forward(x), want, 1e-5);
  auto b = mlp->named_buffers();
  expect_close(b["mlp.0.perceptron.1.running_mean"],
               torch::tensor({-0.03733333200216293, -0.010333333164453506, 0.01666666753590107, 0.04366666451096535}));
  expect_close(b["mlp.0.perceptron.1.running_var"],
               torch::tensor({0.9311432838439941, 0.9079232811927795, 0.9010832905769348, 0.91062331199646}));
}

// Under BF16 autocast the normalisation layers run in their parameters' dtype (fp32), as CUDA
// autocast runs layer_norm / batch_norm: the output equals the fp32 MLP fed with the bf16-rounded
// linear output, and the backward reaches every parameter.
TEST(MLP, NormalizationLayersRunUnderBf16Autocast) {
  for (const bool ln : {true, false}) {
    MLPOptions o;
    o.hidden_units = {4, 3};
    o.use_ln = ln;
    o.use_bn = !ln;
    MLP mlp(3, o);
    mlp->train();
    auto x = torch::randn({5, 3});
    torch::Tensor y;
    {
      AutocastGuard guard(c10::ScalarType::BFloat16);
      y = mlp->forward(x);
    }
    EXPECT_EQ(y.sizes(), (std::vector<int64_t>{5, 3})) << ln;
    y.to(torch::kFloat).sum().backward();
    for (const auto& p : mlp->named_parameters()) {
      ASSERT_TRUE(p.value().grad().defined()) << p.key();
      EXPECT_EQ(p.value().scalar_type(), torch::kFloat) << p.key();
    }
  }
}

TEST(MLP, DropoutOnlyInTraining) {
  MLPOptions o;
  o.hidden_units = {64};
  o.dropout_ratio = {0.5};
  o.activation = "nn.Identity";
  MLP mlp(8, o);
  torch::manual_seed(1);
  auto x = torch::randn({16, 8});
  mlp->eval();
  auto p = mlp->named_parameters();
  auto plain = torch::matmul(x, p["mlp.0.perceptron.0.weight"].t()) + p["mlp.0.perceptron.0.bias"];
  expect_close(mlp->forward(x), plain);
  mlp->train();
  auto y = mlp->forward(x);
  auto zeros = (y == 0).sum().item<int64_t>();
  EXPECT_GT(zeros, 0);
  // Kept units are scaled by 1 / (1 - p).
  auto kept = y != 0;
  expect_close(y.masked_select(kept), (plain * 2).masked_select(kept), 1e-5);
}

// dim 3: Transpose modules at perceptron.1 and .3 around the BatchNorm put it at perceptron.2, as
// tzrec's MLP(dim=3); without use_bn the indices are those of dim 2.
TEST(MLP, Dim3StateDictIndices) {
  MLPOptions o;
  o.hidden_units = {4, 2};
  o.use_bn = true;
  o.dropout_ratio = {0.1};
  o.dim = 3;
  MLP mlp(3, o);
  EXPECT_EQ(names(mlp->named_parameters()),
            (std::vector<std::string>{"mlp.0.perceptron.0.weight", "mlp.0.perceptron.2.weight",
                                      "mlp.0.perceptron.2.bias", "mlp.1.perceptron.0.weight",
                                      "mlp.1.perceptron.2.weight", "mlp.1.perceptron.2.bias"}));
  EXPECT_EQ(names(mlp->named_buffers()),
            (std::vector<std::string>{"mlp.0.perceptron.2.running_mean", "mlp.0.perceptron.2.running_var",
                                      "mlp.0.perceptron.2.num_batches_tracked", "mlp.1.perceptron.2.running_mean",
                                      "mlp.1.perceptron.2.running_var", "mlp.1.perceptron.2.num_batches_tracked"}));
  EXPECT_EQ(layer_children(mlp, 0),
            (std::vector<std::string>{"torch::nn::LinearImpl", "tzrec::nn::TransposeImpl", "torch::nn::BatchNorm1dImpl",
                                      "tzrec::nn::TransposeImpl", "torch::nn::ReLUImpl", "torch::nn::DropoutImpl"}));
  o.use_bn = false;
  o.use_ln = true;
  MLP ln(3, o);
  EXPECT_EQ(names(ln->named_parameters()),
            (std::vector<std::string>{"mlp.0.perceptron.0.weight", "mlp.0.perceptron.0.bias",
                                      "mlp.0.perceptron.1.weight", "mlp.0.perceptron.1.bias",
                                      "mlp.1.perceptron.0.weight", "mlp.1.perceptron.0.bias",
                                      "mlp.1.perceptron.1.weight", "mlp.1.perceptron.1.bias"}));
}

// The dim-2 name of a dim-3 MLP's parameter or buffer: its BatchNorm moves from perceptron.2 to .1.
std::string dim2_name(std::string key) {
  const auto at = key.find("perceptron.2.");
  if (at != std::string::npos) key.replace(at, 13, "perceptron.1.");
  return key;
}

// A dim-3 MLP on [B, T, C] equals a dim-2 MLP with the same weights on the [B·T, C] rows: the fused
// Linear → ReLU path takes 3-D input, and the BatchNorm normalises each channel over all B·T
// positions (training-mode output and running statistics; then eval mode).
TEST(MLP, Dim3MatchesDim2OnRows) {
  for (bool use_bn : {false, true}) {
    MLPOptions o;
    o.hidden_units = {4, 3};
    o.use_bn = use_bn;
    MLP rows(3, o);
    o.dim = 3;
    MLP seq(3, o);
    {
      torch::NoGradGuard g;
      torch::manual_seed(use_bn);
      auto p = rows->named_parameters();
      for (auto& item : seq->named_parameters()) {
        item.value().copy_(torch::randn_like(item.value()));
        p[dim2_name(item.key())].copy_(item.value());
      }
    }
    auto x = torch::randn({2, 5, 3});
    rows->train();
    seq->train();
    auto want = rows->forward(x.reshape({10, 3})).reshape({2, 5, 3});
    expect_close(seq->forward(x), want, 1e-5);
    if (use_bn) {
      auto b = rows->named_buffers();
      for (const auto& item : seq->named_buffers()) expect_close(item.value(), b[dim2_name(item.key())]);
    }
    rows->eval();
    seq->eval();
    expect_close(seq->forward(x), rows->forward(x.reshape({10, 3})).reshape({2, 5, 3}), 1e-5);
  }
}

// forward_from_first_linear(linear(x)) and, for Linear → ReLU layers, forward_from_first_relu(
// relu(linear(x))) are forward(x): values and gradients, with BatchNorm, LayerNorm, other
// activations and dropout (same seed, same mask), dim 2 and 3.
TEST(MLP, ForwardFromFirstLayerMatchesForward) {
  struct Case {
    bool use_bn, use_ln;
    std::string activation;
    double dropout;
    int64_t dim;
  };
  for (const Case& c : {Case{false, false, "nn.ReLU", 0.0, 2}, Case{false, false, "nn.ReLU", 0.3, 3},
                        Case{true, false, "nn.ReLU", 0.0, 3}, Case{false, true, "nn.Tanh", 0.0, 2},
                        Case{false, false, "nn.Sigmoid", 0.2, 3}, Case{false, false, "", 0.0, 2}}) {
    SCOPED_TRACE(c.activation + (c.use_bn ? " bn" : "") + (c.use_ln ? " ln" : "") + " dim " + std::to_string(c.dim));
    MLPOptions o;
    o.hidden_units = {6, 4};
    o.use_bn = c.use_bn;
    o.use_ln = c.use_ln;
    o.activation = c.activation;
    o.dropout_ratio = {c.dropout};
    o.dim = c.dim;
    torch::manual_seed(11);
    MLP mlp(5, o);
    mlp->train();
    EXPECT_EQ(mlp->first_layer_relu(), c.activation == "nn.ReLU" && !c.use_bn && !c.use_ln);
    EXPECT_EQ(mlp->first_linear()->weight.sizes(), (std::vector<int64_t>{6, 5}));
    auto x0 = c.dim == 2 ? torch::randn({7, 5}) : torch::randn({3, 4, 5});
    auto g = c.dim == 2 ? torch::randn({7, 4}) : torch::randn({3, 4, 4});
    auto run = [&](int mode) {  // 0: forward, 1: from the Linear's output, 2: from the ReLU's
      mlp->zero_grad();
      auto x = x0.clone().requires_grad_(true);
      torch::manual_seed(5);
      const auto& first = mlp->first_linear();
      torch::Tensor y;
      if (mode == 0) {
        y = mlp->forward(x);
      } else {
        auto pre = torch::nn::functional::linear(x, first->weight, first->bias);
        y = mode == 1 ? mlp->forward_from_first_linear(pre) : mlp->forward_from_first_relu(torch::relu(pre));
      }
      (y * g).sum().backward();
      std::vector<torch::Tensor> out{y.detach(), x.grad()};
      for (const auto& p : mlp->parameters()) out.push_back(p.grad().clone());
      return out;
    };
    auto want = run(0);
    std::vector<int> modes{1};
    if (mlp->first_layer_relu()) modes.push_back(2);
    for (int mode : modes) {
      auto got = run(mode);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i], 1e-5);
    }
  }
  MLPOptions o;
  o.hidden_units = {3};
  o.use_bn = true;
  MLP bn(2, o);
  EXPECT_THROW(bn->forward_from_first_relu(torch::zeros({2, 3})), c10::Error);
}

void expect_config_error(const MLPOptions& o, const std::string& fragment, int64_t in = 3) {
  try {
    MLP mlp(in, o, "model_config.deepfm.deep");
    ADD_FAILURE() << "no error, expected " << fragment;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(MLP, BadOptions) {
  MLPOptions o;
  expect_config_error(o, "model_config.deepfm.deep.hidden_units: must not be empty");
  o.hidden_units = {4, 0};
  expect_config_error(o, "model_config.deepfm.deep.hidden_units[1]");
  o.hidden_units = {4, 2};
  o.dropout_ratio = {0.1, 0.2, 0.3};
  expect_config_error(o, "model_config.deepfm.deep.dropout_ratio: has 3 values");
  o.dropout_ratio = {1.5};
  expect_config_error(o, "model_config.deepfm.deep.dropout_ratio[0]");
  o.dropout_ratio = {};
  o.use_bn = o.use_ln = true;
  expect_config_error(o, "use_bn and use_ln");
  o.use_ln = false;
  o.activation = "nn.Nope";
  expect_config_error(o, "model_config.deepfm.deep.activation: activation \"nn.Nope\"");
  o.activation = "nn.ReLU";
  expect_config_error(o, "input dimension must be > 0", 0);
}

}  // namespace mlp_test
}  // namespace tzrec::nn
