// hstu_mha against a plain-libtorch transcription of TorchEasyRec's pytorch_hstu_mha (pad every
// sequence to max_seq_len, einsum, the mask of _get_valid_attn_mask / _decode_attn_func_to_mask
// built with tensor ops, silu, einsum, unpad) run in float64 with autograd, and against
// hand-computed values.
#include "nn/hstu_attention.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace tzrec::nn {
namespace hstu_attention_test {

// Row indices of the padded [B · N] layout for every jagged row.
torch::Tensor padded_rows(const torch::Tensor& offsets, int64_t N) {
  std::vector<int64_t> rows;
  for (int64_t b = 0; b + 1 < offsets.size(0); ++b)
    for (int64_t i = offsets[b].item<int64_t>(); i < offsets[b + 1].item<int64_t>(); ++i)
      rows.push_back(b * N + i - offsets[b].item<int64_t>());
  return torch::tensor(rows, torch::kInt64);
}

// values [L, H, D] → [B, H, N, D], zeros past each length (jagged_to_padded_dense).
torch::Tensor pad(const torch::Tensor& x, const torch::Tensor& offsets, int64_t N) {
  const int64_t B = offsets.size(0) - 1, L = x.size(0), H = x.size(1), D = x.size(2);
  return torch::zeros({B * N, H * D}, x.options())
      .index_copy(0, padded_rows(offsets, N), x.reshape({L, H * D}))
      .view({B, N, H, D})
      .transpose(1, 2);
}

// _get_valid_attn_mask (causal) with tensor ops: [B or 1, N, N] bool.
torch::Tensor valid_attn_mask(int64_t N, const torch::Tensor& lengths, const torch::Tensor& num_targets,
                              int64_t max_attn_len, int64_t contextual, int64_t min_full) {
  torch::Tensor ids = torch::arange(N, torch::kInt64).view({1, N});
  torch::Tensor max_ids = lengths.view({-1, 1, 1});
  if (contextual > 0) {
    ids = torch::clamp_min(ids - contextual + 1, 0);
    max_ids = max_ids - contextual + 1;
  }
  torch::Tensor row_ids, col_ids;
  if (num_targets.defined()) {
    max_ids = max_ids - num_targets.view({-1, 1, 1});
    ids = torch::minimum(ids, max_ids);  // [B, 1, N]
    row_ids = ids.view({-1, N, 1}).expand({-1, N, N});
    col_ids = ids.view({-1, 1, N}).expand({-1, N, N});
  } else {
    row_ids = ids.view({N, 1}).expand({N, N});
    col_ids = row_ids.t();
    row_ids = row_ids.view({1, N, N});
    col_ids = col_ids.view({1, N, N});
  }
  const torch::Tensor dist = row_ids - col_ids;
  torch::Tensor valid = torch::eye(N, torch::kBool).view({1, N, N}).logical_or(dist > 0);
  if (max_attn_len > 0) {
    if (min_full > 0) {
      valid = valid.logical_and((dist <= max_attn_len).logical_or(row_ids >= max_ids - min_full));
    } else {
      valid = valid.logical_and(dist <= max_attn_len);
    }
  }
  if (contextual > 0) valid = valid.logical_or((row_ids == 0).logical_and(col_ids < max_ids));
  return valid;
}

// _decode_attn_func_to_mask: [B, H, N, N] bool from func [H, 3, L].
torch::Tensor decode_attn_func(const torch::Tensor& func, const torch::Tensor& offsets, int64_t N) {
  const int64_t H = func.size(0), L = func.size(2), B = offsets.size(0) - 1;
  const torch::Tensor flat = func.permute({2, 0, 1}).reshape({L, H * 3}).to(torch::kInt64);
  const torch::Tensor padded =
      pad(flat.view({L, 1, H * 3}), offsets, N).squeeze(1).view({B, N, H, 3}).permute({0, 2, 1, 3});
  const torch::Tensor cols = torch::arange(N, torch::kInt64).view({1, 1, 1, N});
  const torch::Tensor in0 = cols < padded.select(3, 0).unsqueeze(3);
  const torch::Tensor in1 =
      (cols >= padded.select(3, 1).unsqueeze(3)).logical_and(cols < padded.select(3, 2).unsqueeze(3));
  const torch::Tensor lengths = (offsets.slice(0, 1) - offsets.slice(0, 0, B)).view({B, 1, 1, 1});
  return in0.logical_or(in1).logical_and(cols < lengths);
}

// pytorch_hstu_mha in plain libtorch, in the dtype of q (tests pass float64). Used by
// gr/stu_test.cc too.
torch::Tensor padded_hstu_mha(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const torch::Tensor& offsets, const HstuAttentionOptions& o) {
  const int64_t N = o.max_seq_len, L = q.size(0), H = q.size(1), V = v.size(2), B = offsets.size(0) - 1;
  const double scaling = o.scaling_seqlen == -1 ? static_cast<double>(N) : static_cast<double>(o.scaling_seqlen);
  const torch::Tensor off = offsets.to(torch::kInt64);
  const torch::Tensor pq = pad(q, off, N), pk = pad(k, off, N), pv = pad(v, off, N);
  torch::Tensor s = torch::einsum("bhxa,bhya->bhxy", {pq, pk}) * o.alpha;
  s = torch::silu(s) / scaling;
  if (o.attn_func.defined()) {
    s = s * decode_attn_func(o.attn_func, off, N);
  } else {
    const torch::Tensor targets = o.num_targets.defined() ? o.num_targets.to(torch::kInt64) : torch::Tensor();
    const torch::Tensor lengths = off.slice(0, 1) - off.slice(0, 0, B);
    s = s * valid_attn_mask(N, lengths, targets, o.max_attn_len, o.contextual_seq_len, o.min_full_attn_seq_len)
                .unsqueeze(1);
  }
  const torch::Tensor dense = torch::einsum("bhxd,bhdv->bhxv", {s, pv});
  return dense.transpose(1, 2).reshape({B * N, H * V}).index_select(0, padded_rows(off, N)).view({L, H, V});
}

torch::Tensor offsets_of(const std::vector<int64_t>& lengths) {
  std::vector<int64_t> off{0};
  for (int64_t n : lengths) off.push_back(off.back() + n);
  return torch::tensor(off, torch::kInt64);
}

struct Case {
  std::string name;
  std::vector<int64_t> lengths;
  std::vector<int64_t> targets;  // empty: none
  int64_t contextual = 0, max_attn_len = 0, min_full = 0, scaling = -1, extra_len = 0;
  int64_t sla_k1 = -1, sla_k2 = 0;  // sla_k1 ≥ 0: attn_func of build_sla_func_tensor
  int64_t block = 8;
};

HstuAttentionOptions options_of(const Case& c, const torch::Tensor& offsets, int64_t H, int64_t L) {
  HstuAttentionOptions o;
  int64_t longest = 0;
  for (int64_t n : c.lengths) longest = std::max(longest, n);
  o.max_seq_len = longest + c.extra_len;
  o.alpha = 0.45;
  o.scaling_seqlen = c.scaling;
  o.contextual_seq_len = c.contextual;
  o.max_attn_len = c.max_attn_len;
  o.min_full_attn_seq_len = c.min_full;
  o.block_size = c.block;
  if (!c.targets.empty()) o.num_targets = torch::tensor(c.targets, torch::kInt64);
  if (c.sla_k1 >= 0) {
    // Head 1 gets a wider local window than head 0, so per-head intervals are exercised.
    const torch::Tensor h0 = build_sla_func_tensor(1, c.sla_k1, c.sla_k2, offsets, L, o.num_targets, c.contextual);
    const torch::Tensor h1 =
        build_sla_func_tensor(H - 1, c.sla_k1 + 3, c.sla_k2, offsets, L, o.num_targets, c.contextual);
    o.attn_func = torch::cat({h0, h1}, 0);
  }
  return o;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  out.push_back({"causal", {0, 1, 5, 17, 33, 2}, {}, 0, 0, 0, -1, 0, -1, 0, 8});
  out.push_back({"targets", {1, 9, 23, 40, 0}, {1, 3, 5, 0, 0}, 0, 0, 0, -1, 2, -1, 0, 4});
  out.push_back({"contextual_targets", {0, 2, 3, 12, 37}, {0, 1, 0, 4, 6}, 3, 0, 0, -1, 0, -1, 0, 8});
  out.push_back({"contextual_only", {1, 4, 26}, {}, 2, 0, 0, -1, 0, -1, 0, 8});
  out.push_back({"window", {4, 19, 31, 1}, {}, 0, 5, 0, -1, 0, -1, 0, 8});
  out.push_back({"window_min_full_targets_contextual", {1, 15, 28, 3}, {1, 3, 4, 3}, 2, 4, 6, -1, 0, -1, 0, 8});
  out.push_back({"window_min_full", {22, 9}, {}, 0, 2, 5, -1, 0, -1, 0, 8});
  out.push_back({"scaling_one_tile", {7, 50, 3}, {0, 2, 1}, 0, 0, 0, 100, 0, -1, 0, 64});
  out.push_back({"sla_targets_contextual", {0, 1, 6, 21, 30}, {0, 1, 2, 3, 0}, 1, 0, 0, -1, 0, 3, 2, 4});
  out.push_back({"sla_no_targets", {12, 25}, {}, 0, 0, 0, -1, 0, 2, 0, 8});
  out.push_back({"block_one", {3, 6}, {0, 2}, 1, 2, 0, -1, 0, -1, 0, 1});
  return out;
}

// Expected: the float64 padded reference on the same inputs (values and q/k/v gradients of
// Σ out · g for a random g). Tolerance: float32 accumulation over ≤ 40 keys plus the kernel's exp
// (~2 ulp), so 1e-5 relative with a 1e-6 floor.
TEST(HstuAttention, MatchesThePaddedReferenceInFloat32) {
  torch::manual_seed(7);
  const int64_t H = 2, A = 8, V = 6;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const torch::Tensor offsets = offsets_of(c.lengths);
    const int64_t L = offsets[-1].item<int64_t>();
    const HstuAttentionOptions o = options_of(c, offsets, H, L);
    const torch::Tensor q0 = torch::randn({L, H, A}), k0 = torch::randn({L, H, A}), v0 = torch::randn({L, H, V});
    const torch::Tensor g = torch::randn({L, H, V});

    torch::Tensor q = q0.clone().requires_grad_(true), k = k0.clone().requires_grad_(true),
                  v = v0.clone().requires_grad_(true);
    const torch::Tensor out = hstu_mha(q, k, v, offsets, o);
    (out * g).sum().backward();

    torch::Tensor qd = q0.to(torch::kFloat64).requires_grad_(true), kd = k0.to(torch::kFloat64).requires_grad_(true),
                  vd = v0.to(torch::kFloat64).requires_grad_(true);
    const torch::Tensor ref = padded_hstu_mha(qd, kd, vd, offsets, o);
    (ref * g.to(torch::kFloat64)).sum().backward();

    ASSERT_EQ(out.sizes(), ref.sizes());
    EXPECT_EQ(out.scalar_type(), torch::kFloat32);
    EXPECT_TRUE(torch::allclose(out.to(torch::kFloat64), ref, 1e-5, 1e-6)) << (out - ref).abs().max();
    EXPECT_TRUE(torch::allclose(q.grad().to(torch::kFloat64), qd.grad(), 1e-5, 1e-6))
        << (q.grad() - qd.grad()).abs().max();
    EXPECT_TRUE(torch::allclose(k.grad().to(torch::kFloat64), kd.grad(), 1e-5, 1e-6))
        << (k.grad() - kd.grad()).abs().max();
    EXPECT_TRUE(torch::allclose(v.grad().to(torch::kFloat64), vd.grad(), 1e-5, 1e-6))
        << (v.grad() - vd.grad()).abs().max();
    // Not a trivial pass: the masks leave something to attend to.
    EXPECT_GT(ref.abs().max().item<double>(), 1e-3);
  }
}

// Strided inputs (q, k, v as column slices of one projection, as the STU layer passes them) and
// no-grad mode give the same values as contiguous copies.
TEST(HstuAttention, AcceptsStridedSlicesAndNoGrad) {
  torch::manual_seed(3);
  const int64_t H = 2, A = 4, V = 5;
  const torch::Tensor offsets = offsets_of({3, 0, 11});
  const int64_t L = 14;
  const torch::Tensor uvqk = torch::randn({L, H * (2 * A + V) + 3});
  const torch::Tensor q = uvqk.slice(1, 0, H * A).view({L, H, A});
  const torch::Tensor k = uvqk.slice(1, H * A, 2 * H * A).view({L, H, A});
  const torch::Tensor v = uvqk.slice(1, 2 * H * A, 2 * H * A + H * V).view({L, H, V});
  HstuAttentionOptions o;
  o.max_seq_len = 11;
  o.block_size = 4;
  torch::NoGradGuard no_grad;
  const torch::Tensor out = hstu_mha(q, k, v, offsets, o);
  const torch::Tensor ref =
      padded_hstu_mha(q.to(torch::kFloat64), k.to(torch::kFloat64), v.to(torch::kFloat64), offsets, o);
  EXPECT_TRUE(torch::allclose(out.to(torch::kFloat64), ref, 1e-5, 1e-6));
  EXPECT_TRUE(torch::equal(out, hstu_mha(q.contiguous(), k.contiguous(), v.contiguous(), offsets, o)));
}

// The torch::mm fallback of the tile products (used when the BLAS symbol is missing) agrees with
// the BLAS path. Expected: the BLAS path's values, to float32 rounding.
TEST(HstuAttention, TorchMmFallbackAgreesWithBlas) {
  torch::manual_seed(13);
  const torch::Tensor offsets = offsets_of({9, 0, 21});
  const torch::Tensor q0 = torch::randn({30, 2, 8}), k0 = torch::randn({30, 2, 8}), v0 = torch::randn({30, 2, 4});
  HstuAttentionOptions o;
  o.max_seq_len = 21;
  o.block_size = 4;
  o.num_targets = torch::tensor({2, 0, 3});
  auto run = [&](bool blas) {
    const bool before = set_hstu_blas_enabled(blas);
    torch::Tensor q = q0.clone().requires_grad_(true), k = k0.clone().requires_grad_(true),
                  v = v0.clone().requires_grad_(true);
    const torch::Tensor out = hstu_mha(q, k, v, offsets, o);
    out.sum().backward();
    set_hstu_blas_enabled(before);
    return std::vector<torch::Tensor>{out.detach(), q.grad(), k.grad(), v.grad()};
  };
  const auto blas = run(true), fallback = run(false);
  for (size_t i = 0; i < blas.size(); ++i) EXPECT_TRUE(torch::allclose(blas[i], fallback[i], 1e-5, 1e-6)) << i;
}

// bfloat16 inputs: the kernel accumulates in float32 and rounds results to bfloat16 (relative step
// 2^-8 ≈ 0.4%). Expected: the float64 reference on the same bfloat16-rounded inputs and output
// gradient; tolerance 1e-2 relative plus 1e-2 of the largest magnitude.
TEST(HstuAttention, Bfloat16MatchesTheReferenceOfRoundedInputs) {
  torch::manual_seed(11);
  const int64_t H = 2, A = 16, V = 8;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const torch::Tensor offsets = offsets_of(c.lengths);
    const int64_t L = offsets[-1].item<int64_t>();
    const HstuAttentionOptions o = options_of(c, offsets, H, L);
    const torch::Tensor q0 = torch::randn({L, H, A}).to(torch::kBFloat16);
    const torch::Tensor k0 = torch::randn({L, H, A}).to(torch::kBFloat16);
    const torch::Tensor v0 = torch::randn({L, H, V}).to(torch::kBFloat16);
    const torch::Tensor g = torch::randn({L, H, V}).to(torch::kBFloat16);
    torch::Tensor q = q0.clone().requires_grad_(true), k = k0.clone().requires_grad_(true),
                  v = v0.clone().requires_grad_(true);
    const torch::Tensor out = hstu_mha(q, k, v, offsets, o);
    EXPECT_EQ(out.scalar_type(), torch::kBFloat16);
    out.backward(g);
    EXPECT_EQ(q.grad().scalar_type(), torch::kBFloat16);

    torch::Tensor qd = q0.to(torch::kFloat64).requires_grad_(true), kd = k0.to(torch::kFloat64).requires_grad_(true),
                  vd = v0.to(torch::kFloat64).requires_grad_(true);
    const torch::Tensor ref = padded_hstu_mha(qd, kd, vd, offsets, o);
    ref.backward(g.to(torch::kFloat64));
    auto close = [](const torch::Tensor& got, const torch::Tensor& want) {
      const double scale = want.numel() ? want.abs().max().item<double>() : 0.0;
      return torch::allclose(got.to(torch::kFloat64), want, 1e-2, 1e-2 * scale + 1e-6);
    };
    EXPECT_TRUE(close(out, ref)) << (out.to(torch::kFloat64) - ref).abs().max();
    EXPECT_TRUE(close(q.grad(), qd.grad()));
    EXPECT_TRUE(close(k.grad(), kd.grad()));
    EXPECT_TRUE(close(v.grad(), vd.grad()));
  }
}

// One head, A = 1, V = 2, alpha = 1, max_seq_len = 2 (the divisor), q = (1, 2), k = (1, 0.5),
// v = ((3, −1), (4, 2)); σ(1) = 0.7310585786, σ(2) = 0.8807970780, silu(z) = z σ(z):
//   row 0 sees key 0:    P00 = silu(1) / 2 = 0.3655292893
//   row 1 sees keys 0,1: P10 = silu(2) / 2 = 0.8807970780, P11 = silu(1) / 2 = 0.3655292893
//   out0 = P00 v0 = (1.0965878679, −0.3655292893)
//   out1 = P10 v0 + P11 v1 = (2.6423912340 + 1.4621171572, −0.8807970780 + 0.7310585786)
//        = (4.1045083912, −0.1497384994)
// Gradients of Σ out: dP_ij = Σ_c v_jc = 2 (j = 0), 6 (j = 1); dS_ij = dP_ij silu'(S_ij) / 2 with
// silu'(1) = σ(1)(1 + 1 − σ(1)) = 0.9276705118, silu'(2) = σ(2)(1 + 2(1 − σ(2))) = 1.0907842487:
//   dq0 = dS00 k0 = 0.9276705118;  dq1 = dS10 k0 + dS11 k1 = 1.0907842487 + 3 · 0.9276705118 · 0.5
//       = 2.4822900164
//   dk0 = dS00 q0 + dS10 q1 = 0.9276705118 + 2 · 1.0907842487 = 3.1092390092; dk1 = dS11 q1
//       = 3 · 0.9276705118 · 2 = 5.5660230708
//   dv0 = (P00 + P10)(1, 1) = 1.2463263673 each; dv1 = P11 = 0.3655292893 each
TEST(HstuAttention, HandComputedTwoTokenSequence) {
  torch::Tensor q = torch::tensor({1.0f, 2.0f}).view({2, 1, 1}).requires_grad_(true);
  torch::Tensor k = torch::tensor({1.0f, 0.5f}).view({2, 1, 1}).requires_grad_(true);
  torch::Tensor v = torch::tensor({3.0f, -1.0f, 4.0f, 2.0f}).view({2, 1, 2}).requires_grad_(true);
  HstuAttentionOptions o;
  o.max_seq_len = 2;
  o.alpha = 1.0;
  const torch::Tensor out = hstu_mha(q, k, v, offsets_of({2}), o);
  out.sum().backward();
  EXPECT_TRUE(torch::allclose(
      out.view({2, 2}), torch::tensor({{1.0965878679f, -0.3655292893f}, {4.1045083912f, -0.1497384994f}}), 1e-6, 1e-6))
      << out;
  EXPECT_TRUE(torch::allclose(q.grad().view({2}), torch::tensor({0.9276705118f, 2.4822900164f}), 1e-6, 1e-6))
      << q.grad();
  EXPECT_TRUE(torch::allclose(k.grad().view({2}), torch::tensor({3.1092390092f, 5.5660230708f}), 1e-6, 1e-6))
      << k.grad();
  EXPECT_TRUE(torch::allclose(v.grad().view({2, 2}),
                              torch::tensor({{1.2463263673f, 1.2463263673f}, {0.3655292893f, 0.3655292893f}}), 1e-6,
                              1e-6))
      << v.grad();
}

// With q = k = 1 (A = 1), alpha = 1 and v = the identity (V = n), out[i, j] = silu(1) / N · M[i, j]:
// the output shows the mask. Expected masks derived by hand from _get_valid_attn_mask.
TEST(HstuAttention, MaskSemanticsShowThroughOneHotValues) {
  auto mask_of = [](int64_t n, const HstuAttentionOptions& o) {
    const torch::Tensor ones = torch::ones({n, 1, 1});
    const torch::Tensor eye = torch::eye(n).view({n, 1, n});
    const torch::Tensor out = hstu_mha(ones, ones, eye, offsets_of({n}), o).view({n, n});
    const double p = 0.7310585786 / static_cast<double>(o.max_seq_len);
    return (out / p).round().to(torch::kInt64);
  };
  HstuAttentionOptions o;
  o.max_seq_len = 5;
  o.alpha = 1.0;
  o.block_size = 2;
  // contextual_seq_len 2, 2 targets: ids = (0, 0, 1, 2, 2) (targets clamped to max_id = 5 − 2 + 1
  // − 2 = 2). Contextual rows 0, 1 (id 0) see every key of id < 2 (the history, not the targets);
  // row 2 sees ids < 1 and itself; target rows see ids < 2 and themselves.
  o.contextual_seq_len = 2;
  o.num_targets = torch::tensor({2}, torch::kInt64);
  EXPECT_TRUE(
      torch::equal(mask_of(5, o),
                   torch::tensor({{1, 1, 1, 0, 0}, {1, 1, 1, 0, 0}, {1, 1, 1, 0, 0}, {1, 1, 1, 1, 0}, {1, 1, 1, 0, 1}},
                                 torch::kInt64)))
      << mask_of(5, o);
  // max_attn_len 1, no targets / contextual: a causal band of width 2.
  HstuAttentionOptions w;
  w.max_seq_len = 4;
  w.alpha = 1.0;
  w.max_attn_len = 1;
  w.block_size = 3;
  EXPECT_TRUE(torch::equal(mask_of(4, w),
                           torch::tensor({{1, 0, 0, 0}, {1, 1, 0, 0}, {0, 1, 1, 0}, {0, 0, 1, 1}}, torch::kInt64)));
  // ... and the last 2 history rows (ids ≥ max_id − 2 = 2) attend without the window.
  w.min_full_attn_seq_len = 2;
  EXPECT_TRUE(torch::equal(mask_of(4, w),
                           torch::tensor({{1, 0, 0, 0}, {1, 1, 0, 0}, {1, 1, 1, 0}, {1, 1, 1, 1}}, torch::kInt64)));
}

// A batch spread over several threads gives bit-identical values and gradients to one thread:
// every (sequence, head) is computed by one thread in a fixed order.
TEST(HstuAttention, ThreadCountDoesNotChangeResults) {
  torch::manual_seed(5);
  const int64_t H = 3, A = 16, V = 16;
  const std::vector<int64_t> lengths{70, 0, 1, 33, 129, 64, 5, 90, 17, 2, 48};
  const torch::Tensor offsets = offsets_of(lengths);
  const int64_t L = offsets[-1].item<int64_t>();
  HstuAttentionOptions o;
  o.max_seq_len = 129;
  o.num_targets = torch::tensor({3, 0, 1, 2, 8, 0, 1, 4, 2, 0, 5}, torch::kInt64);
  o.block_size = 16;
  const torch::Tensor q0 = torch::randn({L, H, A}), k0 = torch::randn({L, H, A}), v0 = torch::randn({L, H, V});
  const torch::Tensor g = torch::randn({L, H, V});
  auto run = [&](int threads) {
    const int before = at::get_num_threads();
    at::set_num_threads(threads);
    torch::Tensor q = q0.clone().requires_grad_(true), k = k0.clone().requires_grad_(true),
                  v = v0.clone().requires_grad_(true);
    const torch::Tensor out = hstu_mha(q, k, v, offsets, o);
    out.backward(g);
    at::set_num_threads(before);
    return std::vector<torch::Tensor>{out.detach(), q.grad(), k.grad(), v.grad()};
  };
  const auto one = run(1), many = run(4);
  for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(torch::equal(one[i], many[i])) << i;
}

// B = 0, all-empty batches and length-1 sequences (a length-1 row sees only itself: out =
// silu(alpha q·k) / N · v).
TEST(HstuAttention, EmptyBatchesAndSingleTokens) {
  HstuAttentionOptions o;
  o.max_seq_len = 4;
  {
    torch::Tensor q = torch::zeros({0, 2, 3}, torch::requires_grad());
    const torch::Tensor out = hstu_mha(q, q, torch::zeros({0, 2, 5}), torch::zeros({1}, torch::kInt64), o);
    EXPECT_EQ(out.sizes(), (std::vector<int64_t>{0, 2, 5}));
    out.sum().backward();
    EXPECT_EQ(q.grad().sizes(), q.sizes());
  }
  {
    const torch::Tensor q = torch::zeros({0, 1, 2});
    EXPECT_EQ(hstu_mha(q, q, q, offsets_of({0, 0, 0}), o).size(0), 0);
  }
  {
    const torch::Tensor q = torch::tensor({0.5f, -1.0f, 2.0f}).view({3, 1, 1});
    const torch::Tensor k = torch::tensor({2.0f, 3.0f, 0.25f}).view({3, 1, 1});
    const torch::Tensor v = torch::tensor({1.0f, 2.0f, -4.0f}).view({3, 1, 1});
    o.alpha = 1.0;
    const torch::Tensor out = hstu_mha(q, k, v, offsets_of({1, 1, 1}), o).view({3});
    auto silu = [](double z) { return z / (1.0 + std::exp(-z)); };
    const torch::Tensor want =
        torch::tensor({static_cast<float>(silu(1.0) / 4 * 1.0), static_cast<float>(silu(-3.0) / 4 * 2.0),
                       static_cast<float>(silu(0.5) / 4 * -4.0)});
    EXPECT_TRUE(torch::allclose(out, want, 1e-6, 1e-7)) << out;
  }
}

// Each rejected call breaks one precondition of hstu_attention.h; the first call is valid.
TEST(HstuAttention, RejectsBadInput) {
  const torch::Tensor q = torch::randn({5, 2, 4}), v = torch::randn({5, 2, 3});
  const torch::Tensor offsets = offsets_of({2, 3});
  HstuAttentionOptions o;
  o.max_seq_len = 3;
  EXPECT_NO_THROW(hstu_mha(q, q, v, offsets, o));
  EXPECT_THROW(hstu_mha(q, q.slice(2, 0, 3), v, offsets, o), c10::Error);       // k shape
  EXPECT_THROW(hstu_mha(q, q, v.slice(0, 0, 4), offsets, o), c10::Error);       // v rows
  EXPECT_THROW(hstu_mha(q, q, v.to(torch::kFloat64), offsets, o), c10::Error);  // dtype
  EXPECT_THROW(hstu_mha(q, q, v, torch::tensor({0, 3, 2, 5}), o), c10::Error);  // decreasing
  EXPECT_THROW(hstu_mha(q, q, v, torch::tensor({0, 2, 4}), o), c10::Error);     // ends before L
  EXPECT_THROW(hstu_mha(q, q, v, offsets_of({1, 4}), o), c10::Error);           // over max_seq_len
  HstuAttentionOptions t = o;
  t.num_targets = torch::tensor({3, 1}, torch::kInt64);  // 3 > length 2
  EXPECT_THROW(hstu_mha(q, q, v, offsets, t), c10::Error);
  t.num_targets = torch::tensor({1}, torch::kInt64);  // not [B]
  EXPECT_THROW(hstu_mha(q, q, v, offsets, t), c10::Error);
  HstuAttentionOptions c = o;
  c.causal = false;
  EXPECT_THROW(hstu_mha(q, q, v, offsets, c), c10::Error);
  HstuAttentionOptions f = o;
  f.attn_func = torch::zeros({2, 3, 4}, torch::kInt32);  // L is 5
  EXPECT_THROW(hstu_mha(q, q, v, offsets, f), c10::Error);
  HstuAttentionOptions w = o;
  w.max_attn_len = -1;
  EXPECT_THROW(hstu_mha(q, q, v, offsets, w), c10::Error);
}

// Expected intervals derived by hand from build_sla_func_tensor's rules (header of
// hstu_attention.h).
TEST(HstuAttention, BuildsSlaIntervals) {
  // Lengths 5 and 3 with 1 and 2 targets (history ends 4 and 1), sla_k1 = 2, sla_k2 = 1:
  // sequence 0, p = 0..3: c0 = min(p + 1, 1) = 1, c1 = max(p − 1, 1), c2 = p + 1; p = 4 (target): 4.
  // sequence 1, p = 0: (1, max(−1, 1), 1) = (1, 1, 1); targets: the history end 1.
  const torch::Tensor f = build_sla_func_tensor(2, 2, 1, offsets_of({5, 3}), 8, torch::tensor({1, 2}));
  EXPECT_EQ(f.sizes(), (std::vector<int64_t>{2, 3, 8}));
  EXPECT_EQ(f.scalar_type(), torch::kInt32);
  const torch::Tensor want =
      torch::tensor({{1, 1, 1, 1, 4, 1, 1, 1}, {1, 1, 1, 2, 4, 1, 1, 1}, {1, 2, 3, 4, 4, 1, 1, 1}}, torch::kInt32);
  EXPECT_TRUE(torch::equal(f[0], want)) << f[0];
  EXPECT_TRUE(torch::equal(f[1], want));
  // contextual_seq_len 3 raises sla_k2 0 to 3; no targets, sla_k1 = 2: c0 = min(p + 1, 3),
  // c1 = max(p − 1, 3), c2 = p + 1.
  const torch::Tensor g = build_sla_func_tensor(1, 2, 0, offsets_of({5}), 5, {}, 3);
  EXPECT_TRUE(torch::equal(g[0], torch::tensor({{1, 2, 3, 3, 3}, {3, 3, 3, 3, 3}, {1, 2, 3, 4, 5}}, torch::kInt32)))
      << g[0];
  EXPECT_THROW(build_sla_func_tensor(1, -1, 0, offsets_of({5}), 5), c10::Error);
  EXPECT_THROW(build_sla_func_tensor(1, 1, 0, offsets_of({5}), 4), c10::Error);
}

}  // namespace hstu_attention_test
}  // namespace tzrec::nn
