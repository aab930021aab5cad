#include "nn/din_encoder.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <optional>

#include "base/error.h"
#include "nn/autocast.h"
#include "nn/fp16_linear.h"
#include "nn/sequence_inputs.h"
#include "nn/testing.h"

namespace tzrec::nn {
namespace din_encoder_test {

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

DINEncoderOptions options(std::vector<int64_t> units, bool use_bn = false, int64_t max_seq_length = 0) {
  DINEncoderOptions o;
  o.attn_mlp = testing::relu_mlp(std::move(units));
  o.attn_mlp.use_bn = use_bn;
  o.max_seq_length = max_seq_length;
  return o;
}

// The reference script's din_case(): D = 4, Dq = 3, lengths {4, 2, 0} (int32).
Inputs din_case_inputs() {
  return {{"seq.query", pattern({3, 3}, 0.5)},
          {"seq.sequence", padded_sequence(4, 4, {4, 2, 0}, 1.5)},
          {"seq.sequence_length", torch::tensor({4, 2, 0}, torch::kInt32)}};
}

TEST(DINEncoder, StateDictNames) {
  DINEncoder din(4, 3, "seq", options({5, 3}));
  EXPECT_EQ(din->output_dim(), 4);
  EXPECT_EQ(din->input(), "seq");
  EXPECT_EQ(names(din->named_parameters()),
            (std::vector<std::string>{"mlp.mlp.0.perceptron.0.weight", "mlp.mlp.0.perceptron.0.bias",
                                      "mlp.mlp.1.perceptron.0.weight", "mlp.mlp.1.perceptron.0.bias",
                                      "linear.weight", "linear.bias"}));
  auto p = din->named_parameters();
  EXPECT_EQ(p["mlp.mlp.0.perceptron.0.weight"].sizes(), (std::vector<int64_t>{5, 16}));  // 4 · D inputs
  EXPECT_EQ(p["linear.weight"].sizes(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(p["linear.bias"].sizes(), (std::vector<int64_t>{1}));
  EXPECT_TRUE(din->named_buffers().is_empty());
}

// The attention MLP runs with dim 3: its BatchNorm sits at perceptron.2, between two Transposes.
TEST(DINEncoder, StateDictNamesWithBatchNorm) {
  DINEncoder din(2, 2, "seq", options({3}, true));
  EXPECT_EQ(names(din->named_parameters()),
            (std::vector<std::string>{"mlp.mlp.0.perceptron.0.weight", "mlp.mlp.0.perceptron.2.weight",
                                      "mlp.mlp.0.perceptron.2.bias", "linear.weight", "linear.bias"}));
  EXPECT_EQ(names(din->named_buffers()),
            (std::vector<std::string>{"mlp.mlp.0.perceptron.2.running_mean", "mlp.mlp.0.perceptron.2.running_var",
                                      "mlp.mlp.0.perceptron.2.num_batches_tracked"}));
}

// Expected values: /usr/bin/python3 tests/python/sequence_encoder_reference.py, din_case(). The
// query (Dq 3) is zero-padded to D 4; row 2 is empty and gives 0.
TEST(DINEncoder, MatchesPyTorchWithQueryPaddingAndEmptyRow) {
  DINEncoder din(4, 3, "seq", options({5, 3}));
  set_params(*din);
  Inputs in = din_case_inputs();
  in["seq.query"].requires_grad_(true);
  torch::Tensor out = din->forward(in);
  expect_close(out, torch::tensor({{-0.049274373799562454, -0.06880427151918411, -0.07902181148529053,
                                    -0.07854416966438293},
                                   {0.3367096781730652, 0.25610607862472534, 0.14083999395370483,
                                    0.006511777639389038},
                                   {0.0, 0.0, 0.0, 0.0}}));
  out.sum().backward();
  expect_close(din->named_parameters()["linear.weight"].grad(),
               torch::tensor({{0.8861322999000549, 0.0, -0.07384679466485977}}));
  expect_close(in["seq.query"].grad(), torch::tensor({{0.03232951462268829, 0.061732567846775055, 0.0733460932970047},
                                                      {0.013940796256065369, 0.03416188433766365, 0.045596249401569366},
                                                      {0.0, 0.0, 0.0}}));
}

// Expected values: the reference script's din_case() with max_seq_length = 2 (row 0 keeps 2 of 4 steps).
TEST(DINEncoder, MaxSeqLengthTruncates) {
  DINEncoder din(4, 3, "seq", options({5, 3}, false, 2));
  set_params(*din);
  expect_close(din->forward(din_case_inputs()),
               torch::tensor({{0.2531402111053467, 0.1365111619234085, 0.0014058947563171387, -0.13388969004154205},
                              {0.3367096781730652, 0.25610607862472534, 0.14083999395370483, 0.006511777639389038},
                              {0.0, 0.0, 0.0, 0.0}}));
}

// Steps at t >= length get zero weight whatever they hold, and extra padding steps change nothing.
TEST(DINEncoder, PaddedStepsAreMasked) {
  DINEncoder din(4, 3, "seq", options({5, 3}));
  set_params(*din);
  torch::NoGradGuard g;
  Inputs in = din_case_inputs();
  torch::Tensor want = din->forward(in);
  Inputs noisy = in;
  noisy["seq.sequence"] = in["seq.sequence"].clone();
  noisy["seq.sequence"].index_put_({1, torch::indexing::Slice(2, 4)}, 1e6);  // row 1 has 2 steps
  expect_close(din->forward(noisy), want, 1e-6);
  Inputs longer = in;
  longer["seq.sequence"] = torch::cat({in["seq.sequence"], torch::zeros({3, 5, 4})}, 1);  // T 4 → 9
  expect_close(din->forward(longer), want, 1e-6);
}

// A batch whose rows are all empty (T = 0) gives zeros, also with a training-mode BatchNorm.
TEST(DINEncoder, EmptyBatchGivesZeros) {
  for (bool use_bn : {false, true}) {
    DINEncoder din(4, 3, "seq", options({5, 3}, use_bn));
    din->train();
    Inputs in = {{"seq.query", pattern({3, 3}, 0.5)},
                 {"seq.sequence", torch::zeros({3, 0, 4})},
                 {"seq.sequence_length", torch::zeros({3}, torch::kInt64)}};
    torch::Tensor out = din->forward(in);
    EXPECT_TRUE(torch::equal(out, torch::zeros({3, 4}))) << use_bn << "\n" << out;
  }
}

// Expected values: the reference script's din_bn_case(): training mode, so the BatchNorm
// normalises each channel over all B × T = 6 positions (padded ones too) of [B, C, T] and moves its
// running statistics by momentum 0.1.
TEST(DINEncoder, BatchNormTrainingMatchesPyTorch) {
  DINEncoder din(2, 2, "seq", options({3}, true));
  set_params(*din);
  din->train();
  Inputs in = {{"seq.query", pattern({2, 2}, 0.25)},
               {"seq.sequence", padded_sequence(3, 2, {3, 1}, 2.0)},
               {"seq.sequence_length", torch::tensor({3, 1}, torch::kInt64)}};
  expect_close(din->forward(in),
               torch::tensor({{0.158730149269104, 0.010101601481437683}, {-0.4406030774116516, -0.4962599277496338}}));
  auto b = din->named_buffers();
  expect_close(b["mlp.mlp.0.perceptron.2.running_mean"],
               torch::tensor({0.03756346553564072, -0.03201070427894592, 0.025405261665582657}));
  expect_close(b["mlp.mlp.0.perceptron.2.running_var"],
               torch::tensor({0.9023783206939697, 0.9020112156867981, 0.9016633629798889}));
  EXPECT_EQ(b["mlp.mlp.0.perceptron.2.num_batches_tracked"].item<int64_t>(), 1);
}

// Backward reaches every parameter and both float inputs, with finite values, in training mode
// with BatchNorm and dropout.
TEST(DINEncoder, GradientsFlow) {
  torch::manual_seed(3);
  DINEncoderOptions o = options({6, 4}, true);
  o.attn_mlp.dropout_ratio = {0.2};
  DINEncoder din(4, 2, "seq", o);
  din->train();
  Inputs in = {{"seq.query", torch::randn({5, 2}).requires_grad_(true)},
               {"seq.sequence", torch::randn({5, 7, 4}).requires_grad_(true)},
               {"seq.sequence_length", torch::tensor({7, 3, 0, 1, 5}, torch::kInt32)}};
  torch::Tensor out = din->forward(in);
  ASSERT_EQ(out.sizes(), (std::vector<int64_t>{5, 4}));
  (out * torch::randn({5, 4})).sum().backward();
  for (const auto& p : din->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_TRUE(torch::isfinite(p.value().grad()).all().item<bool>()) << p.key();
  }
  EXPECT_GT(in["seq.query"].grad().abs().sum().item<double>(), 0.0);
  EXPECT_GT(in["seq.sequence"].grad().abs().sum().item<double>(), 0.0);
}

// Under BF16 autocast (train_config.mixed_precision) the GEMMs run in bf16, the BatchNorm and the
// masked softmax in fp32: the output stays close to fp32, the empty row stays 0, backward works.
TEST(DINEncoder, RunsUnderBf16Autocast) {
  DINEncoder din(4, 3, "seq", options({5, 3}, true));
  set_params(*din);
  din->eval();
  Inputs in = din_case_inputs();
  torch::Tensor want = din->forward(in);
  torch::Tensor got;
  {
    AutocastGuard guard(c10::ScalarType::BFloat16);
    got = din->forward(in);
  }
  expect_close(got.to(torch::kFloat), want, 3e-2);
  EXPECT_TRUE(torch::equal(got[2].to(torch::kFloat), torch::zeros({4})));
  got.to(torch::kFloat).sum().backward();
  for (const auto& p : din->named_parameters()) ASSERT_TRUE(p.value().grad().defined()) << p.key();
}

// The split first layer (nn/din_encoder.h) equals the MLP on [q', s, q' − s, q' ⊙ s] as written:
// outputs and the gradients of every parameter, the query and the sequence, in training mode,
// with and without BatchNorm, with another activation and dropout (same seed, same mask), with
// Dq < D and Dq = D. Linear → ReLU runs as one node over chunks of steps split over the threads:
// B = 300, T = 8 gives several chunks, the last one partial.
TEST(DINEncoder, SplitFirstLayerMatchesPlainInput) {
  struct Case {
    bool use_bn;
    std::string activation;
    double dropout;
    int64_t dq;
    int64_t batch;
  };
  for (const Case& c : {Case{false, "nn.ReLU", 0.0, 6, 5}, Case{false, "nn.ReLU", 0.0, 4, 5},
                        Case{false, "nn.ReLU", 0.0, 6, 300}, Case{false, "nn.ReLU", 0.0, 0, 300},
                        Case{true, "nn.ReLU", 0.0, 6, 5}, Case{true, "nn.ReLU", 0.0, 3, 5},
                        Case{false, "nn.Tanh", 0.25, 5, 5}, Case{false, "nn.ReLU", 0.25, 6, 300}}) {
    SCOPED_TRACE(c.activation + (c.use_bn ? " bn" : "") + " dq " + std::to_string(c.dq) + " batch " +
                 std::to_string(c.batch));
    DINEncoderOptions o = options({7, 3}, c.use_bn);
    o.attn_mlp.activation = c.activation;
    o.attn_mlp.dropout_ratio = {c.dropout};
    torch::manual_seed(21);
    DINEncoder din(6, c.dq, "seq", o);
    din->train();
    auto q0 = torch::randn({c.batch, c.dq});
    auto s0 = torch::randn({c.batch, 8, 6});
    auto g = torch::randn({c.batch, 8, 3});
    auto run = [&](bool split) {
      din->zero_grad();
      auto q = q0.clone().requires_grad_(true);
      auto s = s0.clone().requires_grad_(true);
      torch::manual_seed(4);
      torch::Tensor y = din->attention_mlp(q, s, split);
      (y * g).sum().backward();
      std::vector<torch::Tensor> out{y.detach(), q.grad(), s.grad()};
      for (const auto& p : din->parameters()) out.push_back(p.grad().defined() ? p.grad().clone() : torch::Tensor());
      return out;
    };
    auto want = run(false), got = run(true);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE(i);
      ASSERT_EQ(got[i].defined(), want[i].defined());
      if (got[i].defined()) expect_close(got[i], want[i], 2e-5);
    }
    EXPECT_EQ(want[3].sizes(), (std::vector<int64_t>{7, 24}));  // the first layer's weight [H, 4D]
  }
}

// Under BF16 autocast the split layer runs its GEMMs in bf16 and stays close to fp32, with
// gradients for the fp32 parameters; the full encoder too.
TEST(DINEncoder, SplitFirstLayerUnderBf16Autocast) {
  for (bool use_bn : {false, true}) {
    torch::manual_seed(8);
    DINEncoder din(6, 4, "seq", options({16, 8}, use_bn));
    din->eval();
    auto q = torch::randn({5, 4});
    auto s = torch::randn({5, 8, 6});
    torch::Tensor want = din->attention_mlp(q, s, false);
    torch::Tensor got;
    {
      AutocastGuard guard(c10::ScalarType::BFloat16);
      got = din->attention_mlp(q, s, true);
    }
    EXPECT_EQ(got.scalar_type(), use_bn ? torch::kFloat : torch::kBFloat16);
    const double scale = want.abs().max().item<double>();
    EXPECT_LT((got.to(torch::kFloat) - want).abs().max().item<double>(), 0.03 * scale) << use_bn;
    got.to(torch::kFloat).sum().backward();
    for (const auto& p : din->named_parameters()) {
      if (p.key().rfind("linear.", 0) == 0) continue;  // not part of the attention MLP
      ASSERT_TRUE(p.value().grad().defined()) << p.key();
      EXPECT_EQ(p.value().grad().scalar_type(), torch::kFloat) << p.key();
    }
  }
}

// Under fp16 emulation (FP16 on the CPU) the encoder runs the first layer on the input as
// written: its output is the plain computation's, with the emulation's rounding.
TEST(DINEncoder, Fp16EmulationKeepsThePlainInput) {
  DINEncoder din(4, 3, "seq", options({5, 3}));
  set_params(*din);
  Inputs in = din_case_inputs();
  torch::Tensor fp32 = din->forward(in);
  torch::Tensor got, plain;
  {
    AutocastGuard guard(c10::ScalarType::Half);
    got = din->forward(in);
    SequenceInputs si = read_sequence_inputs(in, "DINEncoder", "seq", 4, 3, 0);
    auto* linear = din->named_children()["linear"]->as<torch::nn::LinearImpl>();
    torch::Tensor logits = linear_forward(din->attention_mlp(si.query, si.sequence, false), linear->weight, linear->bias);
    plain = attention_pool(logits.squeeze(2), si.length, si.sequence);
  }
  EXPECT_TRUE(torch::equal(got, plain));
  expect_close(got, fp32, 1e-2);
}

// attention_pool's weighted sum (one node over the steps) equals softmax → [B, 1, T] × [B, T, D]:
// values and the gradients of the logits and the sequence; a non-contiguous sequence too.
TEST(DINEncoder, AttentionPoolMatchesBmm) {
  torch::manual_seed(12);
  auto logits0 = torch::randn({6, 9});
  auto wide = torch::randn({6, 9, 40});
  auto length = torch::tensor({9, 4, 0, 1, 7, 9}, torch::kInt64);
  auto g = torch::randn({6, 37});
  auto run = [&](bool plain) {
    auto logits = logits0.clone().requires_grad_(true);
    auto seq = wide.clone().requires_grad_(true);
    auto s = seq.slice(2, 3, 40);  // [6, 9, 37], not contiguous
    torch::Tensor out;
    if (plain) {
      auto valid = torch::arange(9).unsqueeze(0) < length.unsqueeze(1);
      auto w = torch::softmax(logits.masked_fill(valid.logical_not(), -2147483647.0), -1);
      out = w.unsqueeze(1).bmm(s).squeeze(1);
    } else {
      out = attention_pool(logits, length, s);
    }
    (out * g).sum().backward();
    return std::vector<torch::Tensor>{out.detach(), logits.grad(), seq.grad()};
  };
  auto want = run(true), got = run(false);
  for (size_t i = 0; i < want.size(); ++i) expect_close(got[i], want[i], 1e-5);
}

// Timing of the attention MLP at the size of examples/multi_tower_din_behaviour.config (B 4096,
// T 50, D = Dq = 48, attn_mlp [256, 64]): forward + backward, split and plain, fp32 and BF16.
// Not run by default: --gtest_also_run_disabled_tests --gtest_filter='*BenchmarkAttentionMlp'.
TEST(DINEncoder, DISABLED_BenchmarkAttentionMlp) {
  torch::manual_seed(1);
  DINEncoder din(48, 48, "seq", options({256, 64}));
  din->train();
  auto q = torch::randn({4096, 48}).requires_grad_(true);
  auto s = torch::randn({4096, 50, 48}).requires_grad_(true);
  for (bool bf16 : {false, true}) {
    for (bool split : {true, false}) {
      double fwd = 0, bwd = 0;
      for (int r = 0; r < 4; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        torch::Tensor y;
        {
          AutocastGuard guard(bf16 ? std::optional<c10::ScalarType>(c10::ScalarType::BFloat16) : std::nullopt);
          y = din->attention_mlp(q, s, split);
        }
        const auto t1 = std::chrono::steady_clock::now();
        y.to(torch::kFloat).sum().backward();
        const auto t2 = std::chrono::steady_clock::now();
        if (r > 0) {
          fwd += std::chrono::duration<double>(t1 - t0).count() / 3;
          bwd += std::chrono::duration<double>(t2 - t1).count() / 3;
        }
      }
      std::printf("%s %s: forward %.1f ms, backward %.1f ms\n", bf16 ? "bf16" : "fp32", split ? "split" : "plain",
                  1e3 * fwd, 1e3 * bwd);
    }
  }
}

// forward runs the attention MLP on the valid steps only (nn/din_encoder.h) unless BatchNorm trains:
// values and the gradients of every parameter, the query and the sequence equal the MLP on every
// padded step (attention_mlp on [B, T, D], the output linear, attention_pool), with empty, partial
// and full rows; without BatchNorm in training, with BatchNorm in eval; fp32 and split / plain
// (fp16 emulation) first layers.
TEST(DINEncoder, ValidStepsOnlyMatchPaddedSteps) {
  for (bool use_bn : {false, true}) {
    for (bool fp16 : {false, true}) {
      SCOPED_TRACE(std::string(use_bn ? "bn eval" : "no bn, training") + (fp16 ? ", fp16 emulation" : ""));
      torch::manual_seed(31);
      DINEncoder din(6, 4, "seq", options({16, 8}, use_bn));
      use_bn ? din->eval() : din->train();
      const std::vector<int64_t> lengths = {0, 3, 7, 1, 7, 5, 0, 2};
      auto s0 = torch::randn({8, 7, 6}) * (torch::arange(7).unsqueeze(0) < torch::tensor(lengths).unsqueeze(1)).unsqueeze(2);
      auto q0 = torch::randn({8, 4});
      auto g = torch::randn({8, 6});
      auto* linear = din->named_children()["linear"]->as<torch::nn::LinearImpl>();
      auto run = [&](bool padded) {
        din->zero_grad();
        auto q = q0.clone().requires_grad_(true);
        auto s = s0.clone().requires_grad_(true);
        torch::Tensor y;
        {
          AutocastGuard guard(fp16 ? std::optional<c10::ScalarType>(c10::ScalarType::Half) : std::nullopt);
          Inputs in = {{"seq.query", q}, {"seq.sequence", s}, {"seq.sequence_length", torch::tensor(lengths)}};
          if (padded) {
            torch::Tensor logits = linear_forward(din->attention_mlp(q, s, !fp16), linear->weight, linear->bias);
            y = attention_pool(logits.squeeze(2), torch::tensor(lengths), s);
          } else {
            y = din->forward(in);
          }
        }
        (y * g).sum().backward();
        std::vector<torch::Tensor> out{y.detach(), q.grad(), s.grad()};
        for (const auto& p : din->parameters()) out.push_back(p.grad().defined() ? p.grad().clone() : torch::Tensor());
        return out;
      };
      auto want = run(true), got = run(false);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        SCOPED_TRACE(i);
        ASSERT_EQ(got[i].defined(), want[i].defined());
        if (got[i].defined()) expect_close(got[i], want[i], fp16 ? 1e-3 : 2e-5);
      }
    }
  }
}

TEST(DINEncoder, ConfigErrors) {
  try {
    DINEncoder din(3, 4, "seq", options({2}), "model_config.multi_tower_din.din_towers[0]");
    ADD_FAILURE() << "no error for query_dim > sequence_dim";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model_config.multi_tower_din.din_towers[0]: the query of sequence group "
                                         "\"seq\" is wider (4) than its sequence (3)"),
              std::string::npos)
        << e.what();
  }
  try {
    DINEncoder din(3, 3, "seq", options({}), "model_config.multi_tower_din.din_towers[0]");
    ADD_FAILURE() << "no error for empty hidden_units";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model_config.multi_tower_din.din_towers[0].attn_mlp.hidden_units"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace din_encoder_test
}  // namespace tzrec::nn
