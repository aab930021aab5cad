#include "nn/multi_window_din_encoder.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "nn/autocast.h"
#include "nn/testing.h"

namespace tzrec::nn {
namespace multi_window_din_encoder_test {

using Inputs = std::map<std::string, torch::Tensor>;
using testing::names;

using testing::pattern;  // the reference script computes the expected values below

// [B, T, D] pattern, zero at t >= lengths[b].
torch::Tensor padded_sequence(int64_t steps, int64_t dim, const std::vector<int64_t>& lengths, double phase) {
  const auto batch = static_cast<int64_t>(lengths.size());
  torch::Tensor valid = torch::arange(steps).unsqueeze(0) < torch::tensor(lengths).unsqueeze(1);
  return pattern({batch, steps, dim}, phase) * valid.unsqueeze(2);
}

// Parameter i (in named_parameters() order) = pattern(its shape, i), as the reference script.
void set_params(torch::nn::Module& m) {
  torch::NoGradGuard g;
  double phase = 0;
  for (auto& item : m.named_parameters()) item.value().copy_(pattern(item.value().sizes().vec(), phase++));
}

void expect_close(const torch::Tensor& got, const torch::Tensor& want, double tol = 1e-5) {
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(torch::allclose(got, want, tol, tol)) << "got " << got << "\nwant " << want;
}

MultiWindowDINEncoderOptions options(std::vector<int64_t> units, std::vector<int64_t> windows = {1, 2, 3},
                                     bool use_bn = false) {
  MultiWindowDINEncoderOptions o;
  o.attn_mlp = testing::relu_mlp(std::move(units));
  o.attn_mlp.use_bn = use_bn;
  o.windows_len = std::move(windows);
  return o;
}

// The reference script's multi_window_din_case(): D = 4, Dq = 3, windows {1, 2, 3}, T = 4 (< 6),
// lengths {4, 2, 0} (int32).
Inputs case_inputs() {
  return {{"seq.query", pattern({3, 3}, 0.5)},
          {"seq.sequence", padded_sequence(4, 4, {4, 2, 0}, 1.5)},
          {"seq.sequence_length", torch::tensor({4, 2, 0}, torch::kInt32)}};
}

TEST(MultiWindowDINEncoder, StateDictNames) {
  MultiWindowDINEncoder mw(4, 3, "seq", options({5, 3}));
  EXPECT_EQ(mw->output_dim(), 16);  // D · (3 windows + the query)
  EXPECT_EQ(mw->input(), "seq");
  EXPECT_EQ(names(mw->named_parameters()),
            (std::vector<std::string>{"mlp.mlp.0.perceptron.0.weight", "mlp.mlp.0.perceptron.0.bias",
                                      "mlp.mlp.1.perceptron.0.weight", "mlp.mlp.1.perceptron.0.bias",
                                      "linear.weight", "linear.bias", "active.weight"}));
  auto p = mw->named_parameters();
  EXPECT_EQ(p["mlp.mlp.0.perceptron.0.weight"].sizes(), (std::vector<int64_t>{5, 12}));  // 3 · D inputs
  EXPECT_EQ(p["linear.weight"].sizes(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(p["linear.bias"].sizes(), (std::vector<int64_t>{1}));
  EXPECT_TRUE(torch::equal(p["active.weight"], torch::full({1}, 0.25)));  // nn.PReLU()'s initial slope
  auto b = mw->named_buffers();
  EXPECT_EQ(names(b), (std::vector<std::string>{"windows_len", "cumsum_windows_len"}));
  EXPECT_EQ(b["windows_len"].scalar_type(), torch::kLong);
  EXPECT_EQ(b["cumsum_windows_len"].scalar_type(), torch::kLong);
  EXPECT_TRUE(torch::equal(b["windows_len"], torch::tensor({1, 2, 3}, torch::kLong)));
  EXPECT_TRUE(torch::equal(b["cumsum_windows_len"], torch::tensor({0, 1, 3}, torch::kLong)));
}

// The attention MLP runs with dim 3: its BatchNorm sits at perceptron.2; the encoder's own buffers
// come first, as in a PyTorch state dict.
TEST(MultiWindowDINEncoder, StateDictNamesWithBatchNorm) {
  MultiWindowDINEncoder mw(2, 2, "seq", options({3}, {4}, true));
  EXPECT_EQ(mw->output_dim(), 4);
  EXPECT_EQ(names(mw->named_parameters()),
            (std::vector<std::string>{"mlp.mlp.0.perceptron.0.weight", "mlp.mlp.0.perceptron.2.weight",
                                      "mlp.mlp.0.perceptron.2.bias", "linear.weight", "linear.bias",
                                      "active.weight"}));
  EXPECT_EQ(names(mw->named_buffers()),
            (std::vector<std::string>{"windows_len", "cumsum_windows_len", "mlp.mlp.0.perceptron.2.running_mean",
                                      "mlp.mlp.0.perceptron.2.running_var",
                                      "mlp.mlp.0.perceptron.2.num_batches_tracked"}));
}

// Expected values: /usr/bin/python3 tests/python/sequence_encoder_reference.py,
// multi_window_din_case() (TorchEasyRec's F.pad + segment_reduce written out in PyTorch). Windows
// [0, 1), [1, 3), [3, 6) of T = 4 steps; the query (Dq 3) is zero-padded to D 4 and appended; row 2
// is empty: zero windows, then the query. Gradients of (out · pattern(out, 0.3)).sum().
TEST(MultiWindowDINEncoder, MatchesPyTorch) {
  MultiWindowDINEncoder mw(4, 3, "seq", options({5, 3}));
  set_params(*mw);
  Inputs in = case_inputs();
  in["seq.query"].requires_grad_(true);
  torch::Tensor out = mw->forward(in);
  expect_close(
      out,
      torch::tensor({{0.04740678146481514, 0.045414336025714874, 0.037275269627571106, 0.024091165512800217,
                      -0.020640738308429718, -0.0299081951379776, -0.03512772545218468, -0.03559287637472153,
                      -0.016015395522117615, 0.0012761084362864494, 0.018394919112324715, 0.03302404284477234,
                      0.23971277475357056, 0.38216447830200195, 0.47289201617240906, 0.0},
                     {0.04400741681456566, 0.04840453341603279, 0.046250324696302414, 0.037836331874132156,
                      0.02347732149064541, 0.007223785854876041, -0.010007414035499096, -0.02588415890932083, 0.0,
                      0.0, 0.0, 0.0, 0.4996158182621002, 0.4587189853191376, 0.35573670268058777, 0.0},
                     {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.2046070694923401,
                      0.025784807279706, -0.15652719140052795, 0.0}}));
  (out * pattern({3, 16}, 0.3)).sum().backward();
  auto p = mw->named_parameters();
  expect_close(p["linear.weight"].grad(), torch::tensor({{-0.02160244807600975, 0.0, 0.0}}));
  expect_close(p["active.weight"].grad(), torch::tensor({-0.21624183654785156}));
  expect_close(in["seq.query"].grad(),
               torch::tensor({{-0.4996670186519623, -0.4624165892601013, -0.3625701069831848},
                              {-0.46842554211616516, -0.4967683255672455, -0.4580865502357483},
                              {-0.3828203082084656, -0.4732216000556946, -0.4995748698711395}}));
}

// Expected values: the reference script's multi_window_din_long_case(): T = 8 > 6 = Σ windows_len,
// lengths {8, 5, 1}. TorchEasyRec's negative F.pad drops steps 6 and 7; the divisors come from the
// full lengths (row 0's last window divides by 3, row 1's by min(5 − 3, 3) = 2).
TEST(MultiWindowDINEncoder, StepsBeyondTheWindowsAreDropped) {
  MultiWindowDINEncoder mw(4, 3, "seq", options({5, 3}));
  set_params(*mw);
  torch::NoGradGuard g;
  Inputs in = {{"seq.query", pattern({3, 3}, 0.5)},
               {"seq.sequence", padded_sequence(8, 4, {8, 5, 1}, 1.5)},
               {"seq.sequence_length", torch::tensor({8, 5, 1}, torch::kInt64)}};
  torch::Tensor want = torch::tensor(
      {{0.04740678146481514, 0.045414336025714874, 0.037275269627571106, 0.024091165512800217,
        -0.020640738308429718, -0.0299081951379776, -0.03512772545218468, -0.03559287637472153, 0.01685948669910431,
        0.018713166937232018, 0.018034126609563828, 0.014914239756762981, 0.23971277475357056, 0.38216447830200195,
        0.47289201617240906, 0.0},
       {0.03407692536711693, 0.044387102127075195, 0.048689696937799454, 0.04640237241983414, 0.004175903275609016,
        -0.00911280233412981, -0.021168101578950882, -0.030358392745256424, -0.011007810942828655,
        0.0019108476117253304, 0.01457088440656662, 0.025258798152208328, 0.4996158182621002, 0.4587189853191376,
        0.35573670268058777, 0.0},
       {0.002222476527094841, 0.01906532049179077, 0.03332768753170967, 0.04307937249541283, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.2046070694923401, 0.025784807279706, -0.15652719140052795, 0.0}});
  expect_close(mw->forward(in), want);
  // Whatever the dropped steps hold, nothing changes.
  in["seq.sequence"].index_put_({0, torch::indexing::Slice(6, 8)}, 1e6);
  expect_close(mw->forward(in), want);
}

// Steps at t >= length get zero weight whatever they hold, and extra zero steps within the windows
// change nothing.
TEST(MultiWindowDINEncoder, PaddedStepsAreMasked) {
  MultiWindowDINEncoder mw(4, 3, "seq", options({5, 3}));
  set_params(*mw);
  torch::NoGradGuard g;
  Inputs in = case_inputs();
  torch::Tensor want = mw->forward(in);
  Inputs noisy = in;
  noisy["seq.sequence"] = in["seq.sequence"].clone();
  noisy["seq.sequence"].index_put_({1, torch::indexing::Slice(2, 4)}, 1e6);  // row 1 has 2 steps
  expect_close(mw->forward(noisy), want, 1e-6);
  Inputs longer = in;
  longer["seq.sequence"] = torch::cat({in["seq.sequence"], torch::zeros({3, 2, 4})}, 1);  // T 4 → 6
  expect_close(mw->forward(longer), want, 1e-6);
}

// A batch whose rows are all empty (T = 0) gives zero windows followed by the zero-padded query,
// also with a training-mode BatchNorm (skipped); the query still gets gradients.
TEST(MultiWindowDINEncoder, EmptyBatch) {
  for (bool use_bn : {false, true}) {
    MultiWindowDINEncoder mw(4, 3, "seq", options({5, 3}, {1, 2, 3}, use_bn));
    mw->train();
    torch::Tensor query = pattern({3, 3}, 0.5).requires_grad_(true);
    Inputs in = {{"seq.query", query},
                 {"seq.sequence", torch::zeros({3, 0, 4})},
                 {"seq.sequence_length", torch::zeros({3}, torch::kInt64)}};
    torch::Tensor out = mw->forward(in);
    torch::Tensor want = torch::cat({torch::zeros({3, 12}), query.detach(), torch::zeros({3, 1})}, 1);
    EXPECT_TRUE(torch::equal(out, want)) << use_bn << "\n" << out;
    out.sum().backward();
    EXPECT_TRUE(torch::equal(query.grad(), torch::ones({3, 3})));
  }
}

// Under BF16 autocast (train_config.mixed_precision) the GEMMs run in bf16, the PReLU and the window
// sums in fp32: the output stays close to fp32, the empty row's windows stay 0, backward works. FP16
// (emulated on the CPU) stays close too.
TEST(MultiWindowDINEncoder, RunsUnderBf16Autocast) {
  MultiWindowDINEncoder mw(4, 3, "seq", options({5, 3}, {1, 2, 3}, true));
  set_params(*mw);
  mw->eval();
  Inputs in = case_inputs();
  torch::Tensor want = mw->forward(in);
  torch::Tensor got;
  {
    AutocastGuard guard(c10::ScalarType::BFloat16);
    got = mw->forward(in);
  }
  {
    // FP16 on the CPU: the Linears' GEMMs take the fp16 emulation (nn/fp16_linear.h).
    AutocastGuard guard(c10::ScalarType::Half);
    torch::Tensor half = mw->forward(in);
    EXPECT_EQ(half.scalar_type(), torch::kFloat);
    expect_close(half, want, 1e-2);
  }
  expect_close(got.to(torch::kFloat), want, 3e-2);
  EXPECT_TRUE(torch::equal(got[2].slice(0, 0, 12).to(torch::kFloat), torch::zeros({12})));
  got.to(torch::kFloat).sum().backward();
  for (const auto& p : mw->named_parameters()) ASSERT_TRUE(p.value().grad().defined()) << p.key();
}

TEST(MultiWindowDINEncoder, ConfigErrors) {
  const std::string path = "model_config.multi_tower_din.din_towers[0]";
  auto error_of = [&](int64_t sequence_dim, int64_t query_dim, MultiWindowDINEncoderOptions o) -> std::string {
    try {
      MultiWindowDINEncoder mw(sequence_dim, query_dim, "seq", std::move(o), path);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "no error";
  };
  std::string e = error_of(3, 4, options({2}));
  EXPECT_NE(e.find(path + ": the query of sequence group \"seq\" is wider (4) than its sequence (3)"),
            std::string::npos)
      << e;
  e = error_of(3, 3, options({2}, {}));
  EXPECT_NE(e.find(path + ".windows_len: is empty"), std::string::npos) << e;
  e = error_of(3, 3, options({2}, {2, 0, 1}));
  EXPECT_NE(e.find(path + ".windows_len[1]: a window of 0 steps"), std::string::npos) << e;
  e = error_of(3, 3, options({}));
  EXPECT_NE(e.find(path + ".attn_mlp.hidden_units"), std::string::npos) << e;
}

}  // namespace multi_window_din_encoder_test
}  // namespace tzrec::nn
