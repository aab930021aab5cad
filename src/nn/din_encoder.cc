#include "nn/din_encoder.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>

#include "base/error.h"
#include "base/simd_clones.h"
#include "nn/fp16_emulation.h"
#include "nn/fp16_linear.h"
#include "nn/linear_relu.h"
#include "nn/parallel.h"
#include "nn/sequence_inputs.h"


namespace tzrec::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// ---- element-wise kernels of the fused first layer ----------------------------------------------
// Storage float, or bfloat16 as its bits: widening is a shift, narrowing rounds to nearest even
// (NaN stays NaN), as c10::BFloat16 does, in a form the compiler vectorises. Arithmetic in float.

#define TZREC_INLINE inline __attribute__((always_inline))

TZREC_INLINE float load(float v) { return v; }
TZREC_INLINE float load(uint16_t v) {
  const uint32_t u = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
TZREC_INLINE void store(float* p, float v) { *p = v; }
TZREC_INLINE void store(uint16_t* p, float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  *p = v != v ? uint16_t{0x7fc0} : static_cast<uint16_t>(rounded);
}

// One batch row's `steps` rows of the step input: u[t] = [s[t, :D], q ⊙ s[t, :Dq]] (width D + Dq).
template <typename T>
TZREC_INLINE void build_steps(int64_t steps, int64_t d, int64_t dq, const T* __restrict s, const T* __restrict q,
                              T* __restrict u) {
  for (int64_t t = 0; t < steps; ++t, s += d, u += d + dq) {
    for (int64_t j = 0; j < d; ++j) u[j] = s[j];
    for (int64_t j = 0; j < dq; ++j) store(u + d + j, load(q[j]) * load(s[j]));
  }
}

// y[t] = max(y[t] + c, 0) over one batch row's steps (NaN propagates, as relu).
template <typename T>
TZREC_INLINE void add_bias_relu(int64_t steps, int64_t n, T* __restrict y, const T* __restrict c) {
  for (int64_t t = 0; t < steps; ++t, y += n) {
    for (int64_t h = 0; h < n; ++h) store(y + h, std::max(load(y[h]) + load(c[h]), 0.0f));
  }
}

// ReLU's backward over one batch row's steps, as threshold_backward: m[t] = y[t] > 0 ? g[t] : 0;
// and sum = Σ_t m[t] (the per-row bias's gradient, float).
template <typename T>
TZREC_INLINE void mask_sum(int64_t steps, int64_t n, const T* __restrict g, const T* __restrict y, T* __restrict m,
                           float* __restrict sum) {
  for (int64_t h = 0; h < n; ++h) sum[h] = 0.0f;
  for (int64_t t = 0; t < steps; ++t, g += n, y += n, m += n) {
    for (int64_t h = 0; h < n; ++h) {
      const float v = load(y[h]) > 0.0f ? load(g[h]) : 0.0f;
      store(m + h, v);
      sum[h] += v;
    }
  }
}

// From the step input's gradient gu [steps, D + Dq] of one batch row: gs[t] = gu[t, :D] plus
// q ⊙ gu[t, D:] on the first Dq, and gq = Σ_t gu[t, D:] ⊙ s[t, :Dq] (float).
template <typename T>
TZREC_INLINE void scatter_steps(int64_t steps, int64_t d, int64_t dq, const T* __restrict gu, const T* __restrict s,
                                const T* __restrict q, T* __restrict gs, float* __restrict gq) {
  for (int64_t j = 0; j < dq; ++j) gq[j] = 0.0f;
  for (int64_t t = 0; t < steps; ++t, gu += d + dq, s += d) {
    if (gs != nullptr) {
      T* row = gs + t * d;
      for (int64_t j = 0; j < dq; ++j) store(row + j, load(gu[j]) + load(q[j]) * load(gu[d + j]));
      for (int64_t j = dq; j < d; ++j) row[j] = gu[j];
    }
    if (gq != nullptr) {
      for (int64_t j = 0; j < dq; ++j) gq[j] += load(gu[d + j]) * load(s[j]);
    }
  }
}

TZREC_SIMD_CLONES void build_steps_f32(int64_t steps, int64_t d, int64_t dq, const float* s, const float* q, float* u) {
  build_steps(steps, d, dq, s, q, u);
}
TZREC_SIMD_CLONES void build_steps_bf16(int64_t steps, int64_t d, int64_t dq, const uint16_t* s, const uint16_t* q,
                                        uint16_t* u) {
  build_steps(steps, d, dq, s, q, u);
}
TZREC_SIMD_CLONES void add_bias_relu_f32(int64_t steps, int64_t n, float* y, const float* c) {
  add_bias_relu(steps, n, y, c);
}
TZREC_SIMD_CLONES void add_bias_relu_bf16(int64_t steps, int64_t n, uint16_t* y, const uint16_t* c) {
  add_bias_relu(steps, n, y, c);
}
TZREC_SIMD_CLONES void mask_sum_f32(int64_t steps, int64_t n, const float* g, const float* y, float* m, float* sum) {
  mask_sum(steps, n, g, y, m, sum);
}
TZREC_SIMD_CLONES void mask_sum_bf16(int64_t steps, int64_t n, const uint16_t* g, const uint16_t* y, uint16_t* m,
                                     float* sum) {
  mask_sum(steps, n, g, y, m, sum);
}
TZREC_SIMD_CLONES void scatter_steps_f32(int64_t steps, int64_t d, int64_t dq, const float* gu, const float* s,
                                         const float* q, float* gs, float* gq) {
  scatter_steps(steps, d, dq, gu, s, q, gs, gq);
}
TZREC_SIMD_CLONES void scatter_steps_bf16(int64_t steps, int64_t d, int64_t dq, const uint16_t* gu, const uint16_t* s,
                                          const uint16_t* q, uint16_t* gs, float* gq) {
  scatter_steps(steps, d, dq, gu, s, q, gs, gq);
}

// Typed views of a float or bfloat16 tensor's data for the kernels above.
template <typename T>
T* data(const torch::Tensor& t) {
  if constexpr (std::is_same_v<T, float>) {
    return t.data_ptr<float>();
  } else {
    return reinterpret_cast<uint16_t*>(t.data_ptr<at::BFloat16>());
  }
}

// Bytes of a chunk's [steps, H] block (its masked gradient: about 4 MB, with the chunk's step
// input and its gradient in the last-level cache; larger chunks mean fewer GEMM calls, smaller
// ones less memory).
constexpr int64_t kChunkBytes = int64_t{4} << 20;

// Batch rows per chunk for `steps` steps of `n` outputs of `element_size` bytes.
int64_t chunk_rows(int64_t steps, int64_t n, int64_t element_size) {
  return std::max<int64_t>(1, kChunkBytes / std::max<int64_t>(steps * n * element_size, 1));
}

// relu([s, q ⊙ s] · Wᵀ + row[b]) at every step (nn/din_encoder.h) as one autograd node that never
// materialises the [B, T, D + Dq] step input: it is built chunk by chunk in cache, in forward and
// again in backward, where each chunk's GEMMs run. Forward writes the output [B, T, H] once
// (GEMM, then the bias and the ReLU in place); backward masks the gradient chunk by chunk, so
// neither the step input nor the masked [B, T, H] gradient, nor their gradients, exist whole.
// Saves s, q, W and the output (which the next layer saves anyway).
// s [B, T, D], q [B, Dq], w [H, D + Dq], row [B, H]: one dtype, float or bfloat16; contiguous.
class DinFirstLayerReluFunction : public torch::autograd::Function<DinFirstLayerReluFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& s, const torch::Tensor& q,
                               const torch::Tensor& w, const torch::Tensor& row) {
    torch::Tensor y = torch::empty({s.size(0), s.size(1), w.size(0)}, s.options());
    if (s.scalar_type() == torch::kBFloat16) {
      run_forward<uint16_t>(s, q, w, row, y);
    } else {
      run_forward<float>(s, q, w, row, y);
    }
    ctx->save_for_backward({s, q, w, y});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& s = saved[0];
    const torch::Tensor& q = saved[1];
    const torch::Tensor& w = saved[2];
    const torch::Tensor& y = saved[3];
    torch::Tensor g = grads[0].to(y.scalar_type()).contiguous();
    torch::Tensor grad_s = ctx->needs_input_grad(0) ? torch::empty_like(s) : torch::Tensor();
    torch::Tensor grad_q = ctx->needs_input_grad(1) ? torch::empty(q.sizes(), q.options().dtype(torch::kFloat)) : torch::Tensor();
    torch::Tensor grad_row = torch::empty({y.size(0), y.size(2)}, y.options().dtype(torch::kFloat));
    torch::Tensor grad_w =
        ctx->needs_input_grad(2) ? torch::zeros(w.sizes(), w.options().dtype(torch::kFloat)) : torch::Tensor();
    if (y.scalar_type() == torch::kBFloat16) {
      run_backward<uint16_t>(s, q, w, y, g, grad_s, grad_q, grad_row, grad_w);
    } else {
      run_backward<float>(s, q, w, y, g, grad_s, grad_q, grad_row, grad_w);
    }
    if (grad_w.defined()) grad_w = grad_w.to(w.scalar_type());
    if (grad_q.defined()) grad_q = grad_q.to(q.scalar_type());
    grad_row = ctx->needs_input_grad(3) ? grad_row.to(y.scalar_type()) : torch::Tensor();
    return {grad_s, grad_q, grad_w, grad_row};
  }

 private:
  // Chunks of batch rows spread over the threads by parallel_chunks (nn/parallel.h): each
  // thread builds a chunk's step input in its own buffers and runs the chunk's GEMMs
  // single-threaded.
  template <typename T>
  static void run_forward(const torch::Tensor& s, const torch::Tensor& q, const torch::Tensor& w,
                          const torch::Tensor& row, const torch::Tensor& y) {
    const int64_t batch = s.size(0), steps = s.size(1), d = s.size(2), dq = q.size(1), n = w.size(0), k = d + dq;
    const int64_t rows_per_chunk = chunk_rows(steps, n, s.element_size());
    const torch::Tensor wt = w.t();
    const torch::Tensor y2 = y.view({batch * steps, n});
    const T *sp = data<T>(s), *qp = data<T>(q), *cp = data<T>(row);
    T* yp = data<T>(y);
    // Per thread: the chunk's step input (allocated on this thread: see parallel_chunks' users in
    // nn/linear_relu.cc).
    std::vector<torch::Tensor> u(at::get_num_threads());
    for (torch::Tensor& t : u) t = torch::empty({std::min(rows_per_chunk, batch) * steps, k}, s.options());
    parallel_chunks((batch + rows_per_chunk - 1) / rows_per_chunk, [&](int64_t c, int64_t slot) {
      const int64_t b0 = c * rows_per_chunk, nb = std::min(rows_per_chunk, batch - b0);
      T* up = data<T>(u[slot]);
      for (int64_t b = b0; b < b0 + nb; ++b) {
        build_kernel<T>(steps, d, dq, sp + b * steps * d, qp + b * dq, up + (b - b0) * steps * k);
      }
      torch::Tensor yc = y2.narrow(0, b0 * steps, nb * steps);
      at::mm_out(yc, u[slot].narrow(0, 0, nb * steps), wt);
      for (int64_t b = b0; b < b0 + nb; ++b) bias_relu_kernel<T>(steps, n, yp + b * steps * n, cp + b * n);
    });
  }

  template <typename T>
  static void run_backward(const torch::Tensor& s, const torch::Tensor& q, const torch::Tensor& w,
                           const torch::Tensor& y, const torch::Tensor& g, const torch::Tensor& grad_s,
                           const torch::Tensor& grad_q, const torch::Tensor& grad_row, torch::Tensor& grad_w) {
    const int64_t batch = s.size(0), steps = s.size(1), d = s.size(2), dq = q.size(1), n = w.size(0), k = d + dq;
    const int64_t rows_per_chunk = chunk_rows(steps, n, s.element_size());
    const int64_t rows = std::min(rows_per_chunk, batch) * steps;
    const bool input_grads = grad_s.defined() || grad_q.defined();
    const bool weight_grad = grad_w.defined();
    const T *sp = data<T>(s), *qp = data<T>(q), *yp = data<T>(y), *gp = data<T>(g);
    T* gsp = grad_s.defined() ? data<T>(grad_s) : nullptr;
    float* gqp = grad_q.defined() ? grad_q.data_ptr<float>() : nullptr;
    float* grp = grad_row.data_ptr<float>();
    struct Buffers {
      torch::Tensor m, u, gu, grad_w;  // masked gradient, step input and its gradient, float partial sum
    };
    std::vector<Buffers> buffers(at::get_num_threads());  // allocated on this thread, as in forward
    for (Buffers& buf : buffers) {
      buf.m = torch::empty({rows, n}, s.options());
      if (weight_grad) buf.u = torch::empty({rows, k}, s.options());
      if (weight_grad) buf.grad_w = torch::zeros(w.sizes(), w.options().dtype(torch::kFloat));
      if (input_grads) buf.gu = torch::empty({rows, k}, s.options());
    }
    parallel_chunks((batch + rows_per_chunk - 1) / rows_per_chunk, [&](int64_t c, int64_t slot) {
      const int64_t b0 = c * rows_per_chunk, nb = std::min(rows_per_chunk, batch - b0);
      Buffers& buf = buffers[slot];
      for (int64_t b = b0; b < b0 + nb; ++b) {
        const int64_t off = b * steps * n;
        mask_sum_kernel<T>(steps, n, gp + off, yp + off, data<T>(buf.m) + (b - b0) * steps * n, grp + b * n);
      }
      torch::Tensor mc = buf.m.narrow(0, 0, nb * steps);
      if (weight_grad) {
        for (int64_t b = b0; b < b0 + nb; ++b) {
          build_kernel<T>(steps, d, dq, sp + b * steps * d, qp + b * dq, data<T>(buf.u) + (b - b0) * steps * k);
        }
        torch::Tensor uc = buf.u.narrow(0, 0, nb * steps);
        if constexpr (std::is_same_v<T, float>) {
          buf.grad_w.addmm_(mc.t(), uc);
        } else {
          buf.grad_w.add_(mc.t().mm(uc));  // bf16 GEMM, float sum over the chunks
        }
      }
      if (input_grads) {
        torch::Tensor guc = buf.gu.narrow(0, 0, nb * steps);
        at::mm_out(guc, mc, w);
        const T* gup = data<T>(buf.gu);
        for (int64_t b = b0; b < b0 + nb; ++b) {
          scatter_kernel<T>(steps, d, dq, gup + (b - b0) * steps * k, sp + b * steps * d, qp + b * dq,
                            gsp != nullptr ? gsp + b * steps * d : nullptr, gqp != nullptr ? gqp + b * dq : nullptr);
        }
      }
    });
    for (const Buffers& buf : buffers) {
      if (buf.grad_w.defined()) grad_w.add_(buf.grad_w);
    }
  }

  template <typename T>
  static void build_kernel(int64_t steps, int64_t d, int64_t dq, const T* s, const T* q, T* u) {
    if constexpr (std::is_same_v<T, float>) {
      build_steps_f32(steps, d, dq, s, q, u);
    } else {
      build_steps_bf16(steps, d, dq, s, q, u);
    }
  }
  template <typename T>
  static void bias_relu_kernel(int64_t steps, int64_t n, T* y, const T* c) {
    if constexpr (std::is_same_v<T, float>) {
      add_bias_relu_f32(steps, n, y, c);
    } else {
      add_bias_relu_bf16(steps, n, y, c);
    }
  }
  template <typename T>
  static void mask_sum_kernel(int64_t steps, int64_t n, const T* g, const T* y, T* m, float* sum) {
    if constexpr (std::is_same_v<T, float>) {
      mask_sum_f32(steps, n, g, y, m, sum);
    } else {
      mask_sum_bf16(steps, n, g, y, m, sum);
    }
  }
  template <typename T>
  static void scatter_kernel(int64_t steps, int64_t d, int64_t dq, const T* gu, const T* s, const T* q, T* gs,
                             float* gq) {
    if constexpr (std::is_same_v<T, float>) {
      scatter_steps_f32(steps, d, dq, gu, s, q, gs, gq);
    } else {
      scatter_steps_bf16(steps, d, dq, gu, s, q, gs, gq);
    }
  }
};

}  // namespace


DINEncoderImpl::DINEncoderImpl(int64_t sequence_dim, int64_t query_dim, std::string input, DINEncoderOptions options,
                               const std::string& config_path)
    : sequence_dim_(sequence_dim),
      query_dim_(query_dim),
      input_(std::move(input)),
      max_seq_length_(options.max_seq_length) {
  if (query_dim_ > sequence_dim_) {
    throw ConfigError(fmt::format(
        "{}: the query of sequence group \"{}\" is wider ({}) than its sequence ({}); DINEncoder pads a "
        "narrower query with zeros but cannot shrink one: give the group's query features a total "
        "embedding_dim no larger than its sequence features'",
        config_path, input_, query_dim_, sequence_dim_));
  }
  options.attn_mlp.dim = 3;
  mlp_ = register_module("mlp", MLP(4 * sequence_dim_, std::move(options.attn_mlp), config_path + ".attn_mlp"));
  linear_ = register_module("linear", torch::nn::Linear(mlp_->output_dim(), 1));
}

torch::Tensor DINEncoderImpl::forward(const std::map<std::string, torch::Tensor>& grouped) {
  SequenceInputs in = read_sequence_inputs(grouped, "DINEncoder", input_, sequence_dim_, query_dim_, max_seq_length_);
  const int64_t batch = in.sequence.size(0);
  const int64_t steps = in.sequence.size(1);
  // Nothing to attend to (every row empty): the weighted sum of no steps. The MLP, and so its
  // BatchNorm statistics, is skipped for such a batch.
  if (steps == 0) return torch::zeros({batch, sequence_dim_}, in.sequence.options());
  const bool split = !fp16_emulation_enabled();
  // Valid steps only (nn/din_encoder.h), unless BatchNorm's training statistics need every step.
  const bool pack = !(mlp_->options().use_bn && is_training());
  torch::Tensor flat;  // positions b · T + t of the valid steps
  if (pack) {
    torch::Tensor valid = torch::arange(steps, in.length.options().dtype(torch::kLong)).unsqueeze(0) <
                          in.length.to(torch::kLong).unsqueeze(1);  // [B, T]
    flat = valid.view(-1).nonzero().squeeze(1);
    if (flat.size(0) == batch * steps) flat = torch::Tensor();  // every step valid: nothing to leave out
  }
  if (!flat.defined()) {
    torch::Tensor hidden = attention_mlp(in.query, in.sequence, split);
    torch::Tensor logits = linear_forward(hidden, linear_->weight, linear_->bias);  // [B, T, 1]
    return attention_pool(logits.squeeze(2), in.length, in.sequence);
  }
  torch::Tensor rows = flat.div(steps, "floor");  // the batch row of each valid step
  torch::Tensor items = in.sequence.reshape({batch * steps, sequence_dim_}).index_select(0, flat).unsqueeze(1);
  torch::Tensor hidden = attention_mlp(in.query, items, split, rows);                    // [N, 1, H]
  torch::Tensor valid_logits = linear_forward(hidden, linear_->weight, linear_->bias).view({-1});  // [N]
  // Padded steps get any logit: attention_pool masks them.
  torch::Tensor logits = torch::zeros({batch * steps}, valid_logits.options()).index_put({flat}, valid_logits);
  return attention_pool(logits.view({batch, steps}), in.length, in.sequence);
}

torch::Tensor DINEncoderImpl::attention_mlp(const torch::Tensor& query, const torch::Tensor& sequence, bool split,
                                            const torch::Tensor& rows) {
  const int64_t batch = sequence.size(0);
  const int64_t steps = sequence.size(1);
  const int64_t d = sequence_dim_, dq = query_dim_;
  // The query of each row of `sequence`.
  auto per_row = [&](const torch::Tensor& t) { return rows.defined() ? t.index_select(0, rows) : t; };
  if (!split) {
    torch::Tensor q = per_row(dq < d ? torch::constant_pad_nd(query, {0, d - dq}) : query);
    torch::Tensor queries = q.unsqueeze(1).expand({batch, steps, d});  // [B, T, D]
    return mlp_->forward(torch::cat({queries, sequence, queries - sequence, queries * sequence}, -1));
  }
  // Blocks of W [H, 4D] = [W_q | W_s | W_d | W_p] (nn/din_encoder.h).
  const torch::nn::Linear& first = mlp_->first_linear();
  const torch::Tensor& w = first->weight;
  torch::Tensor w_d = w.slice(1, 2 * d, 3 * d);
  torch::Tensor w_row = w.slice(1, 0, dq) + w_d.slice(1, 0, dq);                                     // [H, Dq]
  torch::Tensor w_step = torch::cat({w.slice(1, d, 2 * d) - w_d, w.slice(1, 3 * d, 3 * d + dq)}, 1);  // [H, D + Dq]
  // The per-row term once per query row, then picked for each row of `sequence`.
  torch::Tensor row = per_row(linear_forward(query, w_row, first->bias));                           // [B, H]
  // The step inputs [s, q ⊙ s] in the dtype the GEMM uses: under CPU autocast its dtype (cast on
  // [B, T, D], not on [B, T, D + Dq]).
  torch::Tensor s = sequence, q = per_row(query);
  const bool autocast = s.is_cpu() && at::autocast::is_cpu_enabled();
  if (autocast) {
    s = s.to(at::autocast::get_autocast_cpu_dtype());
    q = q.to(s.scalar_type());
  }
  const auto type = s.scalar_type();
  const bool fused = mlp_->first_layer_relu() && s.is_cpu() && (type == torch::kFloat || type == torch::kBFloat16) &&
                     q.scalar_type() == type && (autocast || (w.scalar_type() == type && row.scalar_type() == type));
  if (fused) {
    return mlp_->forward_from_first_relu(DinFirstLayerReluFunction::apply(
        s.contiguous(), q.contiguous(), w_step.to(type), row.to(type).contiguous()));
  }
  torch::Tensor step_input = torch::cat({s, q.unsqueeze(1) * (dq < d ? s.slice(2, 0, dq) : s)}, 2);  // [B, T, D + Dq]
  torch::Tensor pre = linear_forward(step_input, w_step, torch::Tensor());  // [B, T, H], a fresh tensor
  return mlp_->forward_from_first_linear(pre.add_(row.unsqueeze(1).to(pre.scalar_type())));
}

}  // namespace tzrec::nn
