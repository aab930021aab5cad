#include "nn/self_attention_encoder.h"

#include <cmath>

#include <gtest/gtest.h>

#include "base/error.h"
#include "nn/autocast.h"
#include "nn/testing.h"

namespace tzrec::nn {
namespace self_attention_encoder_test {

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

SelfAttentionEncoderOptions options(int64_t dim = 4, int64_t heads = 2, double dropout = 0.0,
                                    int64_t max_seq_length = 0) {
  SelfAttentionEncoderOptions o;
  o.multihead_attn_dim = dim;
  o.num_heads = heads;
  o.dropout = dropout;
  o.max_seq_length = max_seq_length;
  return o;
}

// The reference script's self_attention_case(): D = 3, A = 4, H = 2, T = 4, lengths {4, 2, 0}.
Inputs case_inputs() {
  return {{"seq.sequence", padded_sequence(4, 3, {4, 2, 0}, 0.7)},
          {"seq.sequence_length", torch::tensor({4, 2, 0}, torch::kInt64)}};
}

TEST(SelfAttentionEncoder, StateDictNamesAndInit) {
  SelfAttentionEncoder enc(3, 5, "seq", options());  // query_dim (5) is not used
  EXPECT_EQ(enc->output_dim(), 4);
  EXPECT_EQ(enc->input(), "seq");
  EXPECT_EQ(names(enc->named_parameters()),
            (std::vector<std::string>{"_query.weight", "_query.bias", "_key.weight", "_key.bias", "_value.weight",
                                      "_value.bias", "_multihead_attn.in_proj_weight", "_multihead_attn.in_proj_bias",
                                      "_multihead_attn.out_proj.weight", "_multihead_attn.out_proj.bias"}));
  EXPECT_TRUE(enc->named_buffers().is_empty());
  auto p = enc->named_parameters();
  EXPECT_EQ(p["_key.weight"].sizes(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(p["_multihead_attn.in_proj_weight"].sizes(), (std::vector<int64_t>{12, 4}));
  EXPECT_EQ(p["_multihead_attn.in_proj_bias"].sizes(), (std::vector<int64_t>{12}));
  EXPECT_EQ(p["_multihead_attn.out_proj.weight"].sizes(), (std::vector<int64_t>{4, 4}));
  // torch.nn.MultiheadAttention's initialisation: Xavier-uniform in_proj_weight (bound √(6 / (A + 3A))),
  // zero biases.
  EXPECT_LE(p["_multihead_attn.in_proj_weight"].abs().max().item<double>(), std::sqrt(6.0 / 16.0));
  EXPECT_GT(p["_multihead_attn.in_proj_weight"].abs().sum().item<double>(), 0.0);
  EXPECT_TRUE(torch::equal(p["_multihead_attn.in_proj_bias"], torch::zeros({12})));
  EXPECT_TRUE(torch::equal(p["_multihead_attn.out_proj.bias"], torch::zeros({4})));

  // The config defaults: multihead_attn_dim 512, 8 heads.
  SelfAttentionEncoder defaults(16, 16, "seq", SelfAttentionEncoderOptions{});
  EXPECT_EQ(defaults->output_dim(), 512);
  EXPECT_EQ(defaults->named_parameters()["_multihead_attn.in_proj_weight"].sizes(),
            (std::vector<int64_t>{1536, 512}));
}

// Expected values: /usr/bin/python3 tests/python/sequence_encoder_reference.py,
// self_attention_case(): TorchEasyRec's forward run through torch.nn.MultiheadAttention with its
// boolean attn_mask (weights copied in), checked there against the plain-ops version. Row 2 is
// empty and gives 0. With max_seq_length 2, row 0 sums 2 outputs but still divides by its length 4
// (TorchEasyRec does not clamp the length).
TEST(SelfAttentionEncoder, MatchesPyTorch) {
  SelfAttentionEncoder enc(3, 3, "seq", options());
  set_params(*enc);
  torch::Tensor out = enc->forward(case_inputs());
  expect_close(out, torch::tensor({{-0.4699278473854065, 0.6120575070381165, 0.6270014643669128, -0.7592909932136536},
                                   {-0.4464036822319031, 0.5557510852813721, 0.5932665467262268, -0.7091022729873657},
                                   {0.0, 0.0, 0.0, 0.0}}));
  SelfAttentionEncoder truncated(3, 3, "seq", options(4, 2, 0.0, 2));
  set_params(*truncated);
  expect_close(truncated->forward(case_inputs()),
               torch::tensor({{-0.16329777240753174, 0.3760562539100647, 0.254533588886261, -0.46036624908447266},
                              {-0.4464036822319031, 0.5557510852813721, 0.5932665467262268, -0.7091022729873657},
                              {0.0, 0.0, 0.0, 0.0}}));
}

// Expected values: the reference script's self_attention_case(), gradients of out.sum() from the
// plain-ops version (torch.nn.MultiheadAttention gives NaN for every parameter here, because rows 1
// and 2 are shorter than T; this encoder's gradients are finite).
TEST(SelfAttentionEncoder, GradientsWithPaddedRowsAreFinite) {
  SelfAttentionEncoder enc(3, 3, "seq", options());
  set_params(*enc);
  enc->forward(case_inputs()).sum().backward();
  auto p = enc->named_parameters();
  for (const auto& item : p) {
    ASSERT_TRUE(item.value().grad().defined()) << item.key();
    EXPECT_TRUE(torch::isfinite(item.value().grad()).all().item<bool>()) << item.key();
  }
  expect_close(p["_value.weight"].grad(),
               torch::tensor({{0.002319602994248271, -0.0005007631261833012, -0.0032533591147512197},
                              {0.0062842597253620625, 0.004504757467657328, 0.0021155530121177435},
                              {0.009398364461958408, 0.008900581859052181, 0.007198143284767866},
                              {0.011240458115935326, 0.012091755867004395, 0.011306489817798138}}));
  expect_close(p["_multihead_attn.in_proj_bias"].grad(),
               torch::tensor({0.007104937452822924, 0.014361217617988586, 0.006442432291805744, 0.022086091339588165,
                              0.0, 0.0, 0.0, 0.0, -0.19123661518096924, -0.24610576033592224, -0.2676629424095154,
                              -0.25299423933029175}));
}

// Expected values: the reference script's self_attention_full_case(): no padded row, so
// torch.nn.MultiheadAttention's own gradients (of (out · pattern([2, 4], 0.9)).sum()) are finite.
TEST(SelfAttentionEncoder, MatchesTorchMultiheadAttentionGradients) {
  SelfAttentionEncoder enc(3, 3, "seq", options());
  set_params(*enc);
  Inputs in = {{"seq.sequence", pattern({2, 3, 3}, 0.7)},
               {"seq.sequence_length", torch::tensor({3, 3}, torch::kInt64)}};
  torch::Tensor out = enc->forward(in);
  expect_close(out,
               torch::tensor({{-0.3952113687992096, 0.6831552386283875, 0.5651780962944031, -0.8415999412536621},
                              {-0.4796116054058075, 0.5069465041160583, 0.6176241040229797, -0.6558805704116821}}));
  (out * pattern({2, 4}, 0.9)).sum().backward();
  auto p = enc->named_parameters();
  expect_close(p["_query.weight"].grad(),
               torch::tensor({{0.0011614516843110323, 0.0009092320688068867, 0.0005339517956599593},
                              {0.001483658910728991, 0.0011613914975896478, 0.0006819347618147731},
                              {0.0016050594858825207, 0.001256361952982843, 0.0007376209832727909},
                              {0.0015092232497408986, 0.0011812897864729166, 0.0006934738485142589}}),
               1e-6);
  expect_close(p["_multihead_attn.out_proj.weight"].grad(),
               torch::tensor({{0.05254651978611946, -0.6072364449501038, -0.6807794570922852, -0.12073599547147751},
                              {0.09779615700244904, -0.5436562895774841, -0.6656833291053772, -0.12535490095615387},
                              {0.12980954349040985, -0.40649479627609253, -0.5604901313781738, -0.11300759762525558},
                              {0.14425383508205414, -0.21431595087051392, -0.37943708896636963,
                               -0.08536523580551147}}));
}

// Steps at t >= length neither attend nor are attended to, whatever they hold; extra zero steps
// change nothing; int32 lengths work as int64.
TEST(SelfAttentionEncoder, PaddedStepsAreMasked) {
  SelfAttentionEncoder enc(3, 3, "seq", options());
  set_params(*enc);
  torch::NoGradGuard g;
  Inputs in = case_inputs();
  torch::Tensor want = enc->forward(in);
  Inputs noisy = in;
  noisy["seq.sequence"] = in["seq.sequence"].clone();
  noisy["seq.sequence"].index_put_({1, torch::indexing::Slice(2, 4)}, 1e6);  // row 1 has 2 steps
  noisy["seq.sequence_length"] = in["seq.sequence_length"].to(torch::kInt32);
  expect_close(enc->forward(noisy), want, 1e-6);
  Inputs longer = in;
  longer["seq.sequence"] = torch::cat({in["seq.sequence"], torch::zeros({3, 3, 3})}, 1);  // T 4 → 7
  expect_close(enc->forward(longer), want, 1e-6);
}

// A batch whose rows are all empty (T = 0) gives zeros.
TEST(SelfAttentionEncoder, EmptyBatchGivesZeros) {
  SelfAttentionEncoder enc(3, 3, "seq", options());
  Inputs in = {{"seq.sequence", torch::zeros({3, 0, 3})}, {"seq.sequence_length", torch::zeros({3}, torch::kInt64)}};
  EXPECT_TRUE(torch::equal(enc->forward(in), torch::zeros({3, 4})));
}

// Dropout acts on the attention weights in training mode only.
TEST(SelfAttentionEncoder, DropoutOnlyInTraining) {
  SelfAttentionEncoder plain(3, 3, "seq", options());
  SelfAttentionEncoder dropped(3, 3, "seq", options(4, 2, 0.5));
  set_params(*plain);
  set_params(*dropped);
  Inputs in = case_inputs();
  plain->train();  // dropout 0: training changes nothing
  torch::Tensor want = plain->forward(in);
  dropped->eval();
  expect_close(dropped->forward(in), want, 1e-6);
  dropped->train();
  torch::manual_seed(7);
  torch::Tensor got = dropped->forward(in);
  EXPECT_FALSE(torch::allclose(got, want, 1e-4, 1e-4)) << got;
  EXPECT_TRUE(torch::equal(got[2], torch::zeros({4})));
  got.sum().backward();
  for (const auto& p : dropped->named_parameters()) {
    EXPECT_TRUE(torch::isfinite(p.value().grad()).all().item<bool>()) << p.key();
  }
}

// Under BF16 autocast (train_config.mixed_precision) the GEMMs run in bf16, the softmax in fp32: the
// output stays close to fp32, the empty row stays 0, backward gives finite gradients. FP16 (emulated
// on the CPU) stays close too.
TEST(SelfAttentionEncoder, RunsUnderBf16Autocast) {
  SelfAttentionEncoder enc(3, 3, "seq", options());
  set_params(*enc);
  Inputs in = case_inputs();
  torch::Tensor want = enc->forward(in);
  torch::Tensor got;
  {
    AutocastGuard guard(c10::ScalarType::BFloat16);
    got = enc->forward(in);
  }
  {
    // FP16 on the CPU: the Linears' GEMMs take the fp16 emulation (nn/fp16_linear.h).
    AutocastGuard guard(c10::ScalarType::Half);
    torch::Tensor half = enc->forward(in);
    EXPECT_EQ(half.scalar_type(), torch::kFloat);
    expect_close(half, want, 1e-2);
  }
  expect_close(got.to(torch::kFloat), want, 3e-2);
  EXPECT_TRUE(torch::equal(got[2].to(torch::kFloat), torch::zeros({4})));
  got.to(torch::kFloat).sum().backward();
  for (const auto& p : enc->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_TRUE(torch::isfinite(p.value().grad()).all().item<bool>()) << p.key();
  }
}

TEST(SelfAttentionEncoder, ConfigErrors) {
  const std::string path = "model_config.deepfm.seq_encoders[2]";
  auto error_of = [&](SelfAttentionEncoderOptions o) -> std::string {
    try {
      SelfAttentionEncoder enc(3, 3, "seq", o, path);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "no error";
  };
  std::string e = error_of(options(6, 4));
  EXPECT_NE(e.find(path + ".multihead_attn_dim: 6 is not divisible by num_heads (4)"), std::string::npos) << e;
  e = error_of(options(4, 0));
  EXPECT_NE(e.find(path + ".num_heads: 0"), std::string::npos) << e;
  e = error_of(options(4, -2));
  EXPECT_NE(e.find(path + ".num_heads: -2"), std::string::npos) << e;
  e = error_of(options(0, 2));
  EXPECT_NE(e.find(path + ".multihead_attn_dim: 0"), std::string::npos) << e;
  e = error_of(options(4, 2, 1.5));
  EXPECT_NE(e.find(path + ".dropout: 1.5"), std::string::npos) << e;
}

}  // namespace self_attention_encoder_test
}  // namespace tzrec::nn
