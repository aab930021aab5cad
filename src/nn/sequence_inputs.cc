#include "nn/sequence_inputs.h"

#include <algorithm>

#include <ATen/Parallel.h>

#include "base/simd_clones.h"


namespace tzrec::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// out[d] = Σ_t w[t] · s[t, d] for one row (T steps of D floats).
TZREC_SIMD_CLONES
void weighted_sum_row(int64_t steps, int64_t dim, const float* __restrict w, const float* __restrict s,
                      float* __restrict out) {
  for (int64_t d = 0; d < dim; ++d) out[d] = 0.0f;
  for (int64_t t = 0; t < steps; ++t, s += dim) {
    const float wt = w[t];
    for (int64_t d = 0; d < dim; ++d) out[d] += wt * s[d];
  }
}

// Backward of one row: gs[t, d] = w[t] · g[d] (when gs), gw[t] = Σ_d s[t, d] · g[d] (when gw).
TZREC_SIMD_CLONES
void weighted_sum_row_backward(int64_t steps, int64_t dim, const float* __restrict w, const float* __restrict s,
                               const float* __restrict g, float* __restrict gs, float* __restrict gw) {
  for (int64_t t = 0; t < steps; ++t, s += dim) {
    if (gs != nullptr) {
      const float wt = w[t];
      for (int64_t d = 0; d < dim; ++d) gs[t * dim + d] = wt * g[d];
    }
    if (gw != nullptr) {
      float acc = 0.0f;
      for (int64_t d = 0; d < dim; ++d) acc += s[d] * g[d];
      gw[t] = acc;
    }
  }
}

int64_t row_grain(int64_t steps, int64_t dim) { return std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(steps * dim, 1)); }

// Σ_t weights[b, t] · sequence[b, t, :] as one node: [B, 1, T] × [B, T, D] through bmm runs 4096
// tiny GEMMs forward and two more sets backward; one pass over the sequence does each.
class WeightedSumFunction : public torch::autograd::Function<WeightedSumFunction> {
 public:
  // weights [B, T], sequence [B, T, D], both float32 contiguous → [B, D]
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& weights, const torch::Tensor& sequence) {
    const int64_t batch = sequence.size(0), steps = sequence.size(1), dim = sequence.size(2);
    torch::Tensor out = torch::empty({batch, dim}, sequence.options());
    const float* w = weights.data_ptr<float>();
    const float* s = sequence.data_ptr<float>();
    float* o = out.data_ptr<float>();
    at::parallel_for(0, batch, row_grain(steps, dim), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) weighted_sum_row(steps, dim, w + b * steps, s + b * steps * dim, o + b * dim);
    });
    ctx->save_for_backward({weights, sequence});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& weights = saved[0];
    const torch::Tensor& sequence = saved[1];
    const int64_t batch = sequence.size(0), steps = sequence.size(1), dim = sequence.size(2);
    torch::Tensor g = grads[0].to(torch::kFloat).contiguous();
    torch::Tensor grad_w = ctx->needs_input_grad(0) ? torch::empty_like(weights) : torch::Tensor();
    torch::Tensor grad_s = ctx->needs_input_grad(1) ? torch::empty_like(sequence) : torch::Tensor();
    const float* w = weights.data_ptr<float>();
    const float* s = sequence.data_ptr<float>();
    const float* gp = g.data_ptr<float>();
    float* gw = grad_w.defined() ? grad_w.data_ptr<float>() : nullptr;
    float* gs = grad_s.defined() ? grad_s.data_ptr<float>() : nullptr;
    at::parallel_for(0, batch, row_grain(steps, dim), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        weighted_sum_row_backward(steps, dim, w + b * steps, s + b * steps * dim, gp + b * dim,
                                  gs != nullptr ? gs + b * steps * dim : nullptr,
                                  gw != nullptr ? gw + b * steps : nullptr);
      }
    });
    return {grad_w, grad_s};
  }
};

// Σ_t weights[b, t] · sequence[b, t, :]: weights [B, T], sequence [B, T, D] of one dtype → [B, D].
torch::Tensor weighted_sum(const torch::Tensor& weights, const torch::Tensor& sequence) {
  if (sequence.is_cpu() && weights.is_cpu() && sequence.scalar_type() == torch::kFloat &&
      weights.scalar_type() == torch::kFloat) {
    return WeightedSumFunction::apply(weights.contiguous(), sequence.contiguous());
  }
  return weights.unsqueeze(1).matmul(sequence).squeeze(1);  // [B, 1, T] × [B, T, D]
}

}  // namespace

SequenceInputs read_sequence_inputs(const std::map<std::string, torch::Tensor>& grouped, const char* encoder,
                                    const std::string& input, int64_t sequence_dim, int64_t query_dim,
                                    int64_t max_seq_length, bool with_length) {
  auto get = [&](const char* suffix) -> const torch::Tensor& {
    auto it = grouped.find(input + suffix);
    TORCH_CHECK(it != grouped.end(), encoder, ": no tensor \"", input, suffix, "\" among the group's inputs");
    return it->second;
  };
  SequenceInputs in;
  in.sequence = get(".sequence");
  TORCH_CHECK(in.sequence.dim() == 3 && in.sequence.size(2) == sequence_dim, encoder, " \"", input,
              "\": sequence must be [B, T, ", sequence_dim, "], got ", in.sequence.sizes());
  const int64_t batch = in.sequence.size(0);
  if (query_dim >= 0) {
    in.query = get(".query");
    TORCH_CHECK(in.query.dim() == 2 && in.query.size(0) == batch && in.query.size(1) == query_dim, encoder, " \"",
                input, "\": query must be [", batch, ", ", query_dim, "], got ", in.query.sizes());
  }
  if (with_length) {
    in.length = get(".sequence_length");
    TORCH_CHECK(in.length.dim() == 1 && in.length.size(0) == batch, encoder, " \"", input,
                "\": sequence_length must be [", batch, "], got ", in.length.sizes());
  }
  if (max_seq_length > 0) {
    in.sequence = in.sequence.slice(1, 0, max_seq_length);
    if (in.length.defined()) in.length = in.length.clamp_max(max_seq_length);
  }
  return in;
}

torch::Tensor attention_pool(torch::Tensor logits, const torch::Tensor& length, const torch::Tensor& sequence) {
  constexpr double kPaddingLogit = -2147483647.0;  // TorchEasyRec's −2³¹ + 1
  if (logits.scalar_type() == torch::kHalf || logits.scalar_type() == torch::kBFloat16) {
    logits = logits.to(torch::kFloat);
  }
  const int64_t steps = logits.size(1);
  torch::Tensor valid =
      torch::arange(steps, length.options().dtype(torch::kLong)).unsqueeze(0) < length.unsqueeze(1);  // [B, T]
  logits = logits.masked_fill(valid.logical_not(), kPaddingLogit);
  return weighted_sum(torch::softmax(logits, -1).to(sequence.scalar_type()), sequence);  // [B, D]
}

}  // namespace tzrec::nn
