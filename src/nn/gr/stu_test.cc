// STULayer / STUStack against (a) src/nn/gr/stu_reference.py, an independent plain-PyTorch STU
// layer whose printed numbers are pasted below, and (b) a plain-libtorch composition of the same
// definition (layer_norm, addmm, the padded attention reference of hstu_attention_test.cc,
// layer / group norm, concat, addmm) in float64 with autograd.
#include "nn/gr/stu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "nn/hstu_attention.h"
#include "nn/testing.h"

namespace tzrec::nn {
namespace hstu_attention_test {
// Defined in nn/hstu_attention_test.cc: TorchEasyRec's pytorch_hstu_mha in plain libtorch.
torch::Tensor padded_hstu_mha(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const torch::Tensor& offsets, const HstuAttentionOptions& o);
}  // namespace hstu_attention_test

namespace stu_test {

using gr::STULayer;
using gr::STUOptions;
using gr::STUStack;
using testing::pattern;

torch::Tensor offsets_of(const std::vector<int64_t>& lengths) {
  std::vector<int64_t> off{0};
  for (int64_t n : lengths) off.push_back(off.back() + n);
  return torch::tensor(off, torch::kInt64);
}

STUOptions options(int64_t D, int64_t H, int64_t hidden, int64_t attn) {
  STUOptions o;
  o.embedding_dim = D;
  o.num_heads = H;
  o.hidden_dim = hidden;
  o.attention_dim = attn;
  o.output_dropout_ratio = 0.0;
  return o;
}

// Expected names, shapes and initial values: TorchEasyRec's STULayer constructor and STUStack's
// "_stu_layers" ModuleList.
TEST(STULayer, ParametersFollowTorchEasyRec) {
  STUOptions o = options(8, 2, 3, 5);
  STULayer layer(o);
  const auto params = layer->named_parameters();
  EXPECT_EQ(testing::names(params),
            (std::vector<std::string>{"_uvqk_weight", "_uvqk_beta", "_input_norm_weight", "_input_norm_bias",
                                      "_output_weight", "_output_norm_weight", "_output_norm_bias"}));
  EXPECT_EQ(params["_uvqk_weight"].sizes(), (std::vector<int64_t>{8, (3 * 2 + 5 * 2) * 2}));
  EXPECT_EQ(params["_output_weight"].sizes(), (std::vector<int64_t>{3 * 2 * 3, 8}));
  EXPECT_EQ(params["_output_norm_weight"].sizes(), (std::vector<int64_t>{6}));
  EXPECT_TRUE(params["_uvqk_beta"].eq(0).all().item<bool>());
  EXPECT_TRUE(params["_input_norm_weight"].eq(1).all().item<bool>());
  // xavier_uniform: |w| ≤ sqrt(6 / (fan_in + fan_out)), spread over the range.
  const double bound = std::sqrt(6.0 / (8 + 32));
  EXPECT_LE(params["_uvqk_weight"].abs().max().item<double>(), bound);
  EXPECT_GT(params["_uvqk_weight"].abs().max().item<double>(), 0.8 * bound);
  EXPECT_NEAR(layer->attn_alpha(), 1.0 / std::sqrt(5.0), 1e-12);
  o.use_group_norm = true;
  o.attn_alpha = 0.25;
  STULayer grouped(o);
  EXPECT_EQ(grouped->named_parameters()["_output_norm_bias"].sizes(), (std::vector<int64_t>{2}));
  EXPECT_EQ(grouped->attn_alpha(), 0.25);

  STUStack stack(std::vector<STUOptions>{options(4, 1, 2, 2), options(4, 1, 2, 2)});
  const auto names = testing::names(stack->named_parameters());
  EXPECT_EQ(names.size(), 14u);
  EXPECT_EQ(names.front(), "_stu_layers.0._uvqk_weight");
  EXPECT_EQ(names.back(), "_stu_layers.1._output_norm_bias");
}

// The weights of stu_reference.py's make_params.
void set_reference_weights(STULayer& layer) {
  torch::NoGradGuard no_grad;
  auto p = layer->named_parameters();
  auto shape = [&](const char* name) { return p[name].sizes().vec(); };
  p["_uvqk_weight"].copy_(pattern(shape("_uvqk_weight"), 0.1));
  p["_uvqk_beta"].copy_(pattern(shape("_uvqk_beta"), 0.2) * 0.2);
  p["_input_norm_weight"].copy_(1 + pattern(shape("_input_norm_weight"), 0.3) * 0.4);
  p["_input_norm_bias"].copy_(pattern(shape("_input_norm_bias"), 0.4) * 0.2);
  p["_output_weight"].copy_(pattern(shape("_output_weight"), 0.5));
  p["_output_norm_weight"].copy_(1 + pattern(shape("_output_norm_weight"), 0.6) * 0.4);
  p["_output_norm_bias"].copy_(pattern(shape("_output_norm_bias"), 0.7) * 0.2);
}

struct ReferenceCase {
  std::string name;
  STUOptions options;
  std::vector<int64_t> lengths, targets;
  int64_t max_seq_len;
  std::vector<float> out, x_grad;
  std::vector<double> param_checksums;  // in named_parameters() order
  double rtol;
};

std::vector<ReferenceCase> reference_cases() {
  std::vector<ReferenceCase> cases;
  {
    ReferenceCase c{"A", options(4, 2, 3, 2), {3, 0, 5}, {1, 0, 2}, 6, {}, {}, {}, 1e-5};
    c.out = {1.24640589f,  1.39400205f,  1.35292742f,  1.12873969f,  1.25979863f,  1.84476412f,  2.18004865f,
             2.22027470f,  0.45530531f,  1.05163069f,  1.50562312f,  1.75583666f,  -1.17620970f, -0.86163044f,
             -0.43043321f, 0.05902077f,  0.32695647f,  0.85573229f,  1.26868908f,  1.50993461f,  0.20979833f,
             0.59798980f,  0.90524380f,  1.08997911f,  -0.85128023f, -0.55098750f, -0.17612341f, 0.22257978f,
             -1.26848005f, -0.95141473f, -0.50557954f, 0.00868306f};
    c.x_grad = {0.61176437f,  -1.98902804f, 0.40762211f,  2.79020390f,  1.51260631f,  -0.85835707f, -1.13287745f,
                0.85459095f,  0.34698403f,  -2.35252251f, 1.01051414f,  -0.75735970f, -0.08700110f, -0.58776175f,
                -0.31218677f, 0.29320415f,  -1.38085982f, 3.10010060f,  2.99893478f,  -3.09159758f, 0.67294797f,
                0.12369480f,  0.06461671f,  0.12745531f,  -0.92884404f, 0.61021411f,  0.82388840f,  -1.95253921f,
                -0.13182887f, -0.63440685f, -0.61140801f, 0.12647428f};
    c.param_checksums = {-3.41763288, -0.20397979, -1.63317981, 1.10676248, -4.12949755, -0.62070324, 0.40214846};
    cases.push_back(c);
  }
  {
    STUOptions o = options(5, 2, 3, 3);
    o.contextual_seq_len = 1;
    o.max_attn_len = 2;
    o.attn_alpha = 0.7;
    o.scaling_seqlen = 10;
    o.use_group_norm = true;
    ReferenceCase c{"B", o, {4, 1, 6}, {1, 1, 2}, 6, {}, {}, {}, 1e-5};
    c.out = {0.63180217f,  0.85159879f,  0.95613537f,  0.93126362f,  0.78034975f,  1.08546634f,  0.51955813f,
             -0.11666897f, -0.73710644f, -1.25777975f, -0.82929013f, -0.87470669f, -0.80173532f, -0.62025343f,
             -0.35482275f, 0.18588398f,  0.55120413f,  0.84192166f,  1.01868881f,  1.05758117f,  1.72705433f,
             1.36343759f,  0.81528638f,  0.15678947f,  -0.52292769f, -0.20680773f, -0.28915873f, -0.33237395f,
             -0.33060320f, -0.28408725f, -0.47704559f, -0.19573625f, 0.11206543f,  0.40469912f,  0.64255871f,
             1.71479196f,  1.63090731f,  1.32628804f,  0.84216085f,  0.24405152f,  0.76795043f,  0.39945161f,
             -0.02311077f, -0.44254503f, -0.80208404f, -0.83954891f, -0.74144342f, -0.54298751f, -0.27104005f,
             0.03759171f,  0.54470871f,  1.00691179f,  1.33283276f,  1.47836198f,  1.42380152f};
    c.x_grad = {-7.75703093f,  6.46372973f,  -1.69072205f,  -3.78574878f, 8.93537182f,  0.11394582f,  0.25376860f,
                -0.99717765f,  1.06139813f,  -1.17304751f,  -0.83672856f, 0.11033463f,  -1.02072318f, 0.25178643f,
                -0.26178213f,  -1.54949735f, 4.78451716f,   -5.09624035f, 6.18637708f,  -2.61555737f, 0.40196584f,
                0.53799026f,   -0.92874453f, 1.81660788f,   -1.01300380f, -5.08637720f, 4.85650481f,  -2.61393366f,
                -7.97210558f,  8.65720260f,  -0.78095418f,  1.04757222f,  -1.23772977f, 1.56166144f,  -0.21552716f,
                -1.45685375f,  4.39712959f,  -6.01648371f,  6.86169505f,  -1.83348322f, -6.45333247f, 16.37916747f,
                -20.13063715f, 19.85059888f, -11.09672610f, -0.63347636f, -0.10387304f, -0.59426227f, 0.21036049f,
                -0.03102901f,  -0.97932584f, 3.76516760f,   -2.44476859f, 1.21308473f,  0.53188593f};
    c.param_checksums = {9.73491632, 5.26007604, 0.19936412, -0.59145846, 0.58058697, -0.19540430, -0.53523343};
    cases.push_back(c);
  }
  {
    STUOptions o = options(3, 1, 2, 2);
    o.sla_k1 = 2;
    o.sla_k2 = 1;
    ReferenceCase c{"C", o, {6, 2}, {1, 0}, 6, {}, {}, {}, 1e-5};
    c.out = {0.64312128f,  0.83622750f,  0.91615422f,  1.01760325f,  0.85044292f,  0.56817901f,
             0.24242737f,  -0.10289326f, -0.43428756f, -0.67115586f, -0.76661298f, -0.75831268f,
             -0.96355730f, -0.74418796f, -0.42409587f, -0.02580934f, 0.31031431f,  0.60443838f,
             0.86058886f,  1.06984216f,  1.13429745f,  0.82428475f,  0.54748595f,  0.19658822f};
    c.x_grad = {0.40593568f,  0.42652647f,  0.53555490f,  1.20816761f,  -0.89564786f, 0.67589350f,
                -0.08398549f, 0.02830498f,  -0.43331798f, -0.42735695f, -0.73853653f, -0.25739728f,
                -0.40460743f, -0.27134999f, -0.10080924f, -0.06630945f, 0.58295967f,  0.21584411f,
                2.53544637f,  1.11294849f,  -2.22020415f, 1.21018863f,  -1.39188608f, 0.71932637f};
    c.param_checksums = {-1.17144765, -0.18212489, 0.03876777, 0.05554351, 0.03914923, -0.05463197, -0.04735921};
    cases.push_back(c);
  }
  return cases;
}

// Expected: stu_reference.py's printout (eval mode, dropout off); float32 against the script's
// float64, 1e-5 relative (gradients: of their largest magnitude).
TEST(STULayer, MatchesThePythonReference) {
  for (ReferenceCase& c : reference_cases()) {
    SCOPED_TRACE(c.name);
    STULayer layer(c.options);
    layer->eval();
    set_reference_weights(layer);
    int64_t total = 0;
    for (int64_t n : c.lengths) total += n;
    const int64_t D = c.options.embedding_dim;
    torch::Tensor x = (pattern({total, D}, 0.8) * 2).requires_grad_(true);
    const torch::Tensor out =
        layer->forward(x, offsets_of(c.lengths), c.max_seq_len, torch::tensor(c.targets, torch::kInt64));
    (out * pattern({total, D}, 0.9)).sum().backward();
    const torch::Tensor want_out = torch::tensor(c.out).view({total, D});
    const torch::Tensor want_grad = torch::tensor(c.x_grad).view({total, D});
    const double grad_scale = want_grad.abs().max().item<double>();
    EXPECT_TRUE(torch::allclose(out, want_out, c.rtol, 1e-6)) << (out - want_out).abs().max();
    EXPECT_TRUE(torch::allclose(x.grad(), want_grad, c.rtol, c.rtol * grad_scale))
        << (x.grad() - want_grad).abs().max();
    size_t i = 0;
    for (const auto& item : layer->named_parameters()) {
      const double got = (item.value().grad() * pattern(item.value().sizes().vec(), 1.1)).sum().item<double>();
      const double want = c.param_checksums.at(i++);
      EXPECT_NEAR(got, want, c.rtol * 10 * (1.0 + std::abs(want))) << item.key();
    }
  }
}

// The layer's definition in plain libtorch, in the dtype of x (float64 here), from the module's
// parameters (so gradients can be compared parameter by parameter).
torch::Tensor composed_layer(const STUOptions& o, double alpha, const std::vector<torch::Tensor>& p,
                             const torch::Tensor& x, const torch::Tensor& offsets, int64_t max_seq_len,
                             const torch::Tensor& num_targets) {
  const int64_t H = o.num_heads, hid = o.hidden_dim, att = o.attention_dim;
  // p: _uvqk_weight, _uvqk_beta, _input_norm_weight, _input_norm_bias, _output_weight,
  //    _output_norm_weight, _output_norm_bias
  const torch::Tensor normed = torch::layer_norm(x, {o.embedding_dim}, p[2], p[3], 1e-6);
  const torch::Tensor uvqk = torch::addmm(p[1], normed, p[0]);
  const torch::Tensor u = torch::silu(uvqk.slice(1, 0, hid * H));
  const torch::Tensor v = uvqk.slice(1, hid * H, 2 * hid * H).reshape({-1, H, hid});
  const torch::Tensor q = uvqk.slice(1, 2 * hid * H, 2 * hid * H + att * H).reshape({-1, H, att});
  const torch::Tensor k = uvqk.slice(1, 2 * hid * H + att * H).reshape({-1, H, att});
  HstuAttentionOptions ao;
  ao.max_seq_len = max_seq_len;
  ao.alpha = alpha;
  ao.scaling_seqlen = o.scaling_seqlen;
  const torch::Tensor targets = o.target_aware ? num_targets : torch::Tensor();
  if (o.sla_k1 > 0 || o.sla_k2 > 0) {
    ao.attn_func = build_sla_func_tensor(H, o.sla_k1, o.sla_k2, offsets, x.size(0), targets, o.contextual_seq_len);
  } else {
    ao.num_targets = targets;
    ao.max_attn_len = o.max_attn_len;
    ao.contextual_seq_len = o.contextual_seq_len;
  }
  const torch::Tensor attn = hstu_attention_test::padded_hstu_mha(q, k, v, offsets, ao).reshape({-1, H * hid});
  const torch::Tensor na = o.use_group_norm
                               ? torch::group_norm(attn.view({-1, H, hid}), H, p[5], p[6], 1e-6).view({-1, H * hid})
                               : torch::layer_norm(attn, {H * hid}, p[5], p[6], 1e-6);
  return torch::addmm(x, torch::cat({u, attn, u * na}, 1), p[4]);
}

// Expected: composed_layer in float64 on the same weights and inputs. Tolerance 1e-5 relative (and
// 1e-5 of the largest magnitude): float32 through two norms and two projections.
TEST(STULayer, MatchesTheComposedDefinitionWithGradients) {
  torch::manual_seed(21);
  struct Case {
    std::string name;
    STUOptions options;
    std::vector<int64_t> lengths, targets;
  };
  std::vector<Case> cases;
  cases.push_back({"plain", options(16, 2, 8, 4), {0, 1, 9, 30, 14}, {0, 1, 2, 3, 1}});
  {
    STUOptions o = options(12, 3, 4, 6);
    o.contextual_seq_len = 2;
    o.max_attn_len = 5;
    o.use_group_norm = true;
    cases.push_back({"contextual_window_group_norm", o, {3, 17, 26, 2}, {1, 2, 4, 0}});
  }
  {
    STUOptions o = options(8, 2, 4, 4);
    o.target_aware = false;
    o.scaling_seqlen = 50;
    cases.push_back({"not_target_aware", o, {11, 4, 1}, {2, 1, 1}});
  }
  {
    STUOptions o = options(8, 2, 6, 4);
    o.sla_k1 = 4;
    o.sla_k2 = 2;
    o.contextual_seq_len = 1;
    cases.push_back({"sla", o, {25, 0, 7}, {3, 0, 1}});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    STULayer layer(c.options);
    layer->eval();
    {
      torch::NoGradGuard no_grad;  // non-trivial norm parameters and biases
      for (auto& p : layer->parameters()) p.add_(torch::randn(p.sizes()) * 0.1);
    }
    const torch::Tensor offsets = offsets_of(c.lengths);
    const torch::Tensor targets = torch::tensor(c.targets, torch::kInt64);
    int64_t total = 0, longest = 0;
    for (int64_t n : c.lengths) {
      total += n;
      longest = std::max(longest, n);
    }
    const torch::Tensor x0 = torch::randn({total, c.options.embedding_dim});
    const torch::Tensor g = torch::randn({total, c.options.embedding_dim});

    torch::Tensor x = x0.clone().requires_grad_(true);
    const torch::Tensor out = layer->forward(x, offsets, longest + 1, targets);
    out.backward(g);

    std::vector<torch::Tensor> pd;
    for (const auto& p : layer->parameters()) pd.push_back(p.detach().to(torch::kFloat64).requires_grad_(true));
    torch::Tensor xd = x0.to(torch::kFloat64).requires_grad_(true);
    const torch::Tensor ref = composed_layer(c.options, layer->attn_alpha(), pd, xd, offsets, longest + 1, targets);
    ref.backward(g.to(torch::kFloat64));

    auto close = [](const torch::Tensor& got, const torch::Tensor& want) {
      const double scale = want.numel() ? want.abs().max().item<double>() : 0.0;
      return torch::allclose(got.to(torch::kFloat64), want, 1e-5, 1e-5 * scale + 1e-7);
    };
    EXPECT_TRUE(close(out, ref)) << (out.to(torch::kFloat64) - ref).abs().max();
    EXPECT_TRUE(close(x.grad(), xd.grad())) << (x.grad().to(torch::kFloat64) - xd.grad()).abs().max();
    const auto params = layer->named_parameters();
    for (size_t i = 0; i < pd.size(); ++i)
      EXPECT_TRUE(close(params[i].value().grad(), pd[i].grad())) << params[i].key();
  }
}

// Training mode drops entries of cat(u, attn, u · n) with the configured ratio and scales the
// rest by 1 / (1 − ratio). With D = 3 · hidden · H, _output_weight = identity and out − x =
// dropout(y), compared entry by entry with eval mode's y.
TEST(STULayer, TrainingAppliesOutputDropout) {
  torch::manual_seed(4);
  STUOptions o = options(12, 1, 4, 2);
  o.output_dropout_ratio = 0.3;
  STULayer layer(o);
  {
    torch::NoGradGuard no_grad;
    layer->named_parameters()["_output_weight"].copy_(torch::eye(12));
  }
  const std::vector<int64_t> lengths{200, 150, 150};
  const torch::Tensor x = torch::randn({500, 12});
  const torch::Tensor offsets = offsets_of(lengths);
  layer->eval();
  const torch::Tensor y = layer->forward(x, offsets, 200, {}) - x;
  layer->train();
  const torch::Tensor dropped = layer->forward(x, offsets, 200, {}) - x;
  const torch::Tensor live = y.abs() > 1e-3;
  const torch::Tensor ratio = dropped.masked_select(live) / y.masked_select(live);
  const torch::Tensor zero = ratio.abs() < 1e-3;
  const torch::Tensor kept = (ratio - 1.0 / 0.7).abs() < 1e-3;
  EXPECT_TRUE(zero.logical_or(kept).all().item<bool>());
  const double zero_share = zero.to(torch::kFloat64).mean().item<double>();
  EXPECT_NEAR(zero_share, 0.3, 0.03) << ratio.numel() << " entries";
}

// Expected rows derived by hand from compute_stu_truncation_plan's rule (drop the first
// max(U − T, 0) history rows, U = n − C − targets).
TEST(STUStack, TruncationPlanKeepsContextualRecentHistoryAndTargets) {
  // lengths 6, 2, 0, 9; targets 1, 1, 0, 2; C = 1; T = 3:
  //   seq 0: U = 4, drop 1 → local rows 0, 2..5;   seq 1: U = 0 → all;   seq 3: U = 6, drop 3 →
  //   local rows 0, 4..8 (global 8, 12..16).
  const auto plan = gr::compute_stu_truncation_plan(offsets_of({6, 2, 0, 9}), torch::tensor({1, 1, 0, 2}), 9, 3, 1);
  EXPECT_TRUE(torch::equal(plan.kept_rows, torch::tensor({0, 2, 3, 4, 5, 6, 7, 8, 12, 13, 14, 15, 16}, torch::kInt64)));
  EXPECT_TRUE(torch::equal(plan.new_lengths, torch::tensor({5, 2, 0, 6}, torch::kInt64)));
  EXPECT_TRUE(torch::equal(plan.new_x_offsets, torch::tensor({0, 5, 7, 7, 13}, torch::kInt64)));
  EXPECT_EQ(plan.new_max_seq_len, 6);
  EXPECT_EQ(plan.pre_max_seq_len, 9);
  // No contextual prefix, no targets: the last T rows.
  const auto plain = gr::compute_stu_truncation_plan(offsets_of({6, 2}), {}, 6, 3, 0);
  EXPECT_TRUE(torch::equal(plain.kept_rows, torch::tensor({3, 4, 5, 6, 7}, torch::kInt64)));
  const torch::Tensor ts = torch::arange(8, torch::kInt64).view({8, 1}) * 10;
  EXPECT_TRUE(torch::equal(gr::apply_stu_truncation_plan(ts, plain), torch::tensor({30, 40, 50, 60, 70}).view({5, 1})));
  EXPECT_THROW(gr::compute_stu_truncation_plan(offsets_of({6}), {}, 6, -1, 0), c10::Error);
}

// Expected: the layers called one by one with the plan applied before the split layer.
TEST(STUStack, TruncatesBeforeTheSplitLayer) {
  torch::manual_seed(8);
  std::vector<STUOptions> layers(3, options(8, 2, 4, 4));
  for (auto& o : layers) o.contextual_seq_len = 1;
  STUStack stack(layers, 2, 3);
  stack->eval();
  const torch::Tensor offsets = offsets_of({6, 2, 0, 9});
  const torch::Tensor targets = torch::tensor({1, 1, 0, 2}, torch::kInt64);
  torch::Tensor x = torch::randn({17, 8}, torch::requires_grad());
  const auto out = stack->forward(x, offsets, 9, targets);
  ASSERT_TRUE(out.plan.has_value());
  EXPECT_EQ(out.x.sizes(), (std::vector<int64_t>{13, 8}));
  EXPECT_TRUE(torch::equal(out.x_offsets, torch::tensor({0, 5, 7, 7, 13}, torch::kInt64)));
  EXPECT_EQ(out.max_seq_len, 6);

  torch::Tensor h = stack->layer(0)->forward(x, offsets, 9, targets);
  h = stack->layer(1)->forward(h, offsets, 9, targets);
  h = gr::apply_stu_truncation_plan(h, *out.plan);
  h = stack->layer(2)->forward(h, out.x_offsets, 6, targets);
  EXPECT_TRUE(torch::allclose(out.x, h, 1e-6, 1e-6));
  out.x.sum().backward();
  EXPECT_TRUE(x.grad().defined());

  const auto untruncated = STUStack(layers)->forward(x, offsets, 9, targets);
  EXPECT_FALSE(untruncated.plan.has_value());
  EXPECT_EQ(untruncated.x.size(0), 17);
  EXPECT_THROW(STUStack(layers, 2, 0), c10::Error);
  EXPECT_THROW(STUStack(layers, 3, 4), c10::Error);
  EXPECT_THROW(STUStack(layers, 0, 4), c10::Error);
}

// B = 0 and all-empty batches run forward and backward with either output norm.
TEST(STULayer, EmptyBatches) {
  for (bool group : {false, true}) {
    STUOptions o = options(6, 2, 3, 4);
    o.use_group_norm = group;
    STULayer layer(o);
    torch::Tensor x = torch::zeros({0, 6}, torch::requires_grad());
    torch::Tensor out = layer->forward(x, torch::zeros({1}, torch::kInt64), 4, torch::zeros({0}, torch::kInt64));
    EXPECT_EQ(out.sizes(), x.sizes());
    out.sum().backward();
    out = layer->forward(x, offsets_of({0, 0}), 1, torch::tensor({0, 0}));
    EXPECT_EQ(out.size(0), 0);
  }
}

// bfloat16 activations (float32 parameters cast per call, as TorchEasyRec): the same values as
// float32 to bfloat16 precision. Expected: the float32 layer; tolerance 3e-2 of the largest value.
TEST(STULayer, Bfloat16ActivationsFollowFloat32) {
  torch::manual_seed(9);
  STUOptions o = options(16, 2, 8, 8);
  STULayer layer(o);
  layer->eval();
  const torch::Tensor offsets = offsets_of({12, 0, 30});
  const torch::Tensor targets = torch::tensor({2, 0, 3});
  const torch::Tensor x = torch::randn({42, 16});
  const torch::Tensor want = layer->forward(x, offsets, 30, targets);
  const torch::Tensor got = layer->forward(x.to(torch::kBFloat16), offsets, 30, targets);
  EXPECT_EQ(got.scalar_type(), torch::kBFloat16);
  const double scale = want.abs().max().item<double>();
  EXPECT_TRUE(torch::allclose(got.to(torch::kFloat32), want, 3e-2, 3e-2 * scale))
      << (got.to(torch::kFloat32) - want).abs().max();
}

}  // namespace stu_test
}  // namespace tzrec::nn
