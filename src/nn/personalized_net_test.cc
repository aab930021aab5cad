// GateNU, EPNet and PPNet (tzrec/modules/personalized_net.py) against an independent plain-PyTorch
// reference (values and input gradients) and their state-dict names.
#include "nn/personalized_net.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nn/testing.h"

namespace tzrec::nn {
namespace personalized_net_test {

using testing::names;
using testing::pattern;  // the reference script builds weights and inputs the same way


// ---------------------------------------------------------------------------------------------
// Modules against the reference.
//
// Expected values: /usr/bin/python3 tests/python/pepnet_reference.py, which writes GateNU, EPNet,
// PPNet and Dice out in plain PyTorch ops following TorchEasyRec's definitions
// (tzrec/modules/personalized_net.py: GateNU line 20, EPNet line 62 with the detached main input
// of its gate at line 104, PPNet line 110 with its gate input at line 188; Dice in
// tzrec/modules/activation.py). Parameter i in named_parameters() order is pattern(shape, i); the
// outputs' upstream gradient is pattern(out_t shape, 2.5 + t).

// --- GateNU(5, 4, 3, gamma 1.5), x = 3 · pattern([3, 5], 0.5)
const std::vector<std::vector<float>> kGateNUOut0 = {{1.2843276262283325, 0.28986233472824097, 0.14511337876319885}, {0.9832816123962402, 0.46533000469207764, 0.409670889377594}, {0.9998565316200256, 0.21351894736289978, 0.34482449293136597}};
const std::vector<std::vector<float>> kGateNUGradX = {{0.010305354371666908, 0.011308509856462479, 0.010781108401715755, 0.008794537745416164, 0.005617665126919746}, {0.012997670099139214, -0.0029653229285031557, -0.018526971340179443, -0.031581077724695206, -0.04036082699894905}, {-0.025105860084295273, -0.021568158641457558, -0.015111304819583893, -0.006609209347516298, 0.002787422388792038}};

// --- EPNet(main 4, domain 3, hidden 5, gamma 2), main = 3 · pattern([3, 4], 0.7), domain = 3 · pattern([3, 3], 1.9)
const std::vector<std::vector<float>> kEPNetOut0 = {{1.6405807733535767, 0.21501760184764862, 1.0096229314804077, 2.598278760910034}, {1.6684863567352295, 0.41649287939071655, 0.2629932463169098, -0.29143306612968445}, {-0.8941089510917664, -0.15637220442295074, -1.948245644569397, -2.4614741802215576}};
const std::vector<std::vector<float>> kEPNetGradMain = {{0.5080280303955078, 0.021918954327702522, -0.03334954380989075, -0.40247097611427307}, {-0.5042660236358643, -0.23277392983436584, -0.3988554775714874, -0.6107012629508972}, {-0.44108104705810547, -0.029406649991869926, -0.056703995913267136, 0.23250162601470947}};
const std::vector<std::vector<float>> kEPNetGradDomain = {{-0.007483275607228279, -0.00938047282397747, -0.010008065961301327}, {0.010243069380521774, 0.014601231552660465, 0.016983183100819588}, {0.02147706039249897, 0.02294955402612686, 0.021315935999155045}};

// --- PPNet(main 4, uia 3, 2 tasks, hidden [5, 3], nn.ReLU, dropout [0.1, 0.2] (eval), gamma 1.7),
//     main = 3 · pattern([3, 4], 0.7), uia = 3 · pattern([3, 3], 2.3)
const std::vector<std::vector<float>> kPPNetReluOut0 = {{1.1741294860839844, 0.0, 0.0}, {0.8631153106689453, 0.0, 0.0}, {0.7079452872276306, 0.0, 0.03112875297665596}};
const std::vector<std::vector<float>> kPPNetReluOut1 = {{0.3001894950866699, 0.12361504137516022, 0.0}, {0.40321874618530273, 0.3825394809246063, 0.0}, {0.6681118607521057, 0.1649380922317505, 0.0}};
const std::vector<std::vector<float>> kPPNetReluGradMain = {{0.049595125019550323, 0.04674096405506134, 0.03756064549088478, 0.023296650499105453}, {-0.15383881330490112, -0.1464318037033081, -0.11920581012964249, -0.07584593445062637}, {0.003190932795405388, 0.052866581827402115, 0.09538701176643372, 0.12499725073575974}};
const std::vector<std::vector<float>> kPPNetReluGradUia = {{-0.03355555981397629, -0.01205701194703579, 0.011073445901274681}, {-0.02702772058546543, -0.020319677889347076, -0.010861402377486229}, {0.0010746009647846222, 0.0034989165142178535, 0.0054496522061526775}};

// --- PPNet(main 4, uia 3, 1 task, hidden [5, 3], Dice, gamma 2), training (Dice's batch
//     statistics), main = 3 · pattern([4, 4], 0.7), uia = 3 · pattern([4, 3], 2.3)
const std::vector<std::vector<float>> kPPNetDiceOut0 = {{0.9820393919944763, -0.41372790932655334, -0.027179747819900513}, {0.05033497512340546, -0.36686447262763977, -0.08993428945541382}, {0.0523030124604702, 0.4369675815105438, 0.6823388934135437}, {-0.009771798737347126, -0.6532920002937317, 0.13330285251140594}};
const std::vector<std::vector<float>> kPPNetDiceGradMain = {{0.05324645712971687, 0.13613839447498322, 0.2006046622991562, 0.23792003095149994}, {-0.00908708106726408, -0.02581605315208435, -0.03905094787478447, -0.04700048267841339}, {0.19764094054698944, 0.2619069814682007, 0.29072514176368713, 0.280195027589798}, {-0.0832497850060463, -0.10354994982481003, -0.10983512550592422, -0.10125462710857391}};
const std::vector<std::vector<float>> kPPNetDiceGradUia = {{-0.009831822477281094, -0.013910382054746151, -0.01610623486340046}, {0.00612537981942296, 0.005796340294182301, 0.004682797472923994}, {0.028385872021317482, 0.041890136897563934, 0.04972480237483978}, {-0.003782678861171007, -0.007072770968079567, -0.00940560083836317}};

torch::Tensor rows(const std::vector<std::vector<float>>& v) {
  std::vector<torch::Tensor> out;
  for (const auto& r : v) out.push_back(torch::tensor(r));
  return torch::stack(out);
}

// Parameter i (named_parameters() order) = pattern(its shape, i), as the reference script.
void fill(torch::nn::Module& m) {
  torch::NoGradGuard no_grad;
  double phase = 0;
  for (auto& item : m.named_parameters()) item.value().copy_(pattern(item.value().sizes().vec(), phase++));
}

// sum_t sum(out_t · pattern(out_t shape, 2.5 + t)), the reference's upstream gradient.
torch::Tensor weighted_sum(const std::vector<torch::Tensor>& outs) {
  torch::Tensor loss = torch::zeros({});
  for (size_t t = 0; t < outs.size(); ++t) loss = loss + (outs[t] * pattern(outs[t].sizes().vec(), 2.5 + t)).sum();
  return loss;
}

::testing::AssertionResult Near(const torch::Tensor& got, const std::vector<std::vector<float>>& want) {
  torch::Tensor w = rows(want);
  if (got.sizes() == w.sizes() && torch::allclose(got.detach(), w, 1e-5, 1e-6)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got\n" << got << "\nwant\n" << w;
}

torch::Tensor input(std::vector<int64_t> shape, double phase) { return (pattern(shape, phase) * 3).requires_grad_(); }

TEST(PEPNetModules, GateNUMatchesTheReference) {
  GateNU gate(5, 4, 3, 1.5);
  EXPECT_EQ(names(gate->named_parameters()),
            (std::vector<std::string>{"dense_layers.0.weight", "dense_layers.0.bias", "dense_layers.2.weight",
                                      "dense_layers.2.bias"}));
  fill(*gate);
  torch::Tensor x = input({3, 5}, 0.5);
  torch::Tensor out = gate->forward(x);
  EXPECT_TRUE(Near(out, kGateNUOut0));
  weighted_sum({out}).backward();
  EXPECT_TRUE(Near(x.grad(), kGateNUGradX));
  // sigmoid · gamma: every value in (0, gamma).
  EXPECT_TRUE((out > 0).all().item<bool>() && (out < 1.5).all().item<bool>());
}

TEST(PEPNetModules, EPNetMatchesTheReferenceAndItsGateSendsNoGradientToMain) {
  EPNet epnet(4, 3, 5, 2.0);
  EXPECT_EQ(names(epnet->named_parameters()),
            (std::vector<std::string>{"gate_nu.dense_layers.0.weight", "gate_nu.dense_layers.0.bias",
                                      "gate_nu.dense_layers.2.weight", "gate_nu.dense_layers.2.bias"}));
  EXPECT_EQ(epnet->named_parameters()["gate_nu.dense_layers.0.weight"].sizes(), (std::vector<int64_t>{5, 7}));
  EXPECT_EQ(epnet->output_dim(), 4);
  fill(*epnet);
  torch::Tensor main = input({3, 4}, 0.7);
  torch::Tensor domain = input({3, 3}, 1.9);
  torch::Tensor out = epnet->forward(main, domain);
  EXPECT_TRUE(Near(out, kEPNetOut0));
  weighted_sum({out}).backward();
  EXPECT_TRUE(Near(main.grad(), kEPNetGradMain));
  EXPECT_TRUE(Near(domain.grad(), kEPNetGradDomain));
  // The gradient into main is the gate alone (the gate's own input is detached).
  torch::Tensor gate;
  {
    torch::NoGradGuard no_grad;
    gate = out / main;
  }
  EXPECT_TRUE(torch::allclose(main.grad(), gate * pattern({3, 4}, 2.5), 1e-5, 1e-6));
}

TEST(PEPNetModules, PPNetMatchesTheReference) {
  PPNetOptions opts;
  opts.hidden_units = {5, 3};
  opts.dropout_ratio = {0.1, 0.2};
  opts.gamma = 1.7;
  PPNet ppnet(4, 3, 2, opts);
  // TorchEasyRec's PPNet: the lists linears, activations, dropout_ratios, gate_nus; module k =
  // task · 2 + layer. ReLU and Dropout have no parameters.
  std::vector<std::string> want;
  for (int k = 0; k < 4; ++k) {
    want.push_back("linears." + std::to_string(k) + ".weight");
    want.push_back("linears." + std::to_string(k) + ".bias");
  }
  for (int k = 0; k < 4; ++k) {
    for (const char* p : {"0.weight", "0.bias", "2.weight", "2.bias"}) {
      want.push_back("gate_nus." + std::to_string(k) + ".dense_layers." + p);
    }
  }
  EXPECT_EQ(names(ppnet->named_parameters()), want);
  EXPECT_TRUE(ppnet->named_buffers().is_empty());
  auto params = ppnet->named_parameters();
  EXPECT_EQ(params["linears.2.weight"].sizes(), (std::vector<int64_t>{5, 4}));  // task 1, layer 0
  EXPECT_EQ(params["linears.3.weight"].sizes(), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(params["gate_nus.3.dense_layers.0.weight"].sizes(), (std::vector<int64_t>{3, 7}));
  EXPECT_EQ(ppnet->task_output_dim(), 3);
  std::vector<std::string> modules;
  for (const auto& item : ppnet->named_modules("", false)) modules.push_back(item.key());
  for (const char* m : {"activations.3", "dropout_ratios.1", "dropout_ratios.3"}) {
    EXPECT_NE(std::find(modules.begin(), modules.end(), m), modules.end()) << m;
  }

  fill(*ppnet);
  ppnet->eval();  // dropout off
  torch::Tensor main = input({3, 4}, 0.7);
  torch::Tensor uia = input({3, 3}, 2.3);
  auto outs = ppnet->forward(main, uia);
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_TRUE(Near(outs[0], kPPNetReluOut0));
  EXPECT_TRUE(Near(outs[1], kPPNetReluOut1));
  weighted_sum(outs).backward();
  EXPECT_TRUE(Near(main.grad(), kPPNetReluGradMain));
  EXPECT_TRUE(Near(uia.grad(), kPPNetReluGradUia));
}

TEST(PEPNetModules, PPNetWithDiceMatchesTheReference) {
  PPNetOptions opts;
  opts.hidden_units = {5, 3};
  opts.activation = "Dice";
  PPNet ppnet(4, 3, 1, opts);
  EXPECT_EQ(
      names(ppnet->named_parameters()),
      (std::vector<std::string>{
          "linears.0.weight", "linears.0.bias", "linears.1.weight", "linears.1.bias", "activations.0.alpha",
          "activations.1.alpha", "gate_nus.0.dense_layers.0.weight", "gate_nus.0.dense_layers.0.bias",
          "gate_nus.0.dense_layers.2.weight", "gate_nus.0.dense_layers.2.bias", "gate_nus.1.dense_layers.0.weight",
          "gate_nus.1.dense_layers.0.bias", "gate_nus.1.dense_layers.2.weight", "gate_nus.1.dense_layers.2.bias"}));
  EXPECT_EQ(names(ppnet->named_buffers()),
            (std::vector<std::string>{"activations.0.bn.running_mean", "activations.0.bn.running_var",
                                      "activations.0.bn.num_batches_tracked", "activations.1.bn.running_mean",
                                      "activations.1.bn.running_var", "activations.1.bn.num_batches_tracked"}));
  // Dice is as wide as its layer.
  EXPECT_EQ(ppnet->named_parameters()["activations.1.alpha"].sizes(), (std::vector<int64_t>{3}));

  fill(*ppnet);
  ppnet->train();
  torch::Tensor main = input({4, 4}, 0.7);
  torch::Tensor uia = input({4, 3}, 2.3);
  auto outs = ppnet->forward(main, uia);
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_TRUE(Near(outs[0], kPPNetDiceOut0));
  weighted_sum(outs).backward();
  EXPECT_TRUE(Near(main.grad(), kPPNetDiceGradMain));
  EXPECT_TRUE(Near(uia.grad(), kPPNetDiceGradUia));
}

TEST(PEPNetModules, PPNetDropoutBroadcastsLikeTorchEasyRec) {
  auto dropout_ps = [](std::vector<double> ratios) {
    PPNetOptions opts;
    opts.hidden_units = {4, 3, 2};
    opts.dropout_ratio = std::move(ratios);
    PPNet ppnet(5, 2, 1, opts);
    std::vector<double> ps;
    for (const auto& item : ppnet->named_modules("", false)) {
      if (item.key().rfind("dropout_ratios.", 0) != 0) continue;
      ps.push_back(item.value()->as<torch::nn::DropoutImpl>()->options.p());
    }
    return ps;
  };
  EXPECT_EQ(dropout_ps({}), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(dropout_ps({0.25}), (std::vector<double>{0.25, 0.25, 0.25}));
  EXPECT_EQ(dropout_ps({0.1, 0.2, 0.3}), (std::vector<double>{0.1, 0.2, 0.3}));
}

}  // namespace personalized_net_test
}  // namespace tzrec::nn
