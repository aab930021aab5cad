#include "nn/hstu_attention.h"

#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "base/simd_clones.h"

namespace tzrec::nn {
namespace {

// ---- tile GEMMs ----------------------------------------------------------------------------
// The BLAS that libtorch itself loaded (OpenBLAS / MKL export the Fortran sgemm_): one call per
// tile costs about a microsecond, where at::mm costs a dispatch and two tensor wrappers. libtorch
// does not export its own cpublas::gemm, so the symbol is looked up at run time; without it
// (a BLAS linked with hidden symbols) at::mm_out on wrappers of the same buffers is the fallback.
using SgemmFn = void (*)(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
                         const int*, const float*, const int*, const float*, float*, const int*);

std::atomic<bool> blas_enabled{true};

SgemmFn blas_sgemm() {
  static const SgemmFn fn = reinterpret_cast<SgemmFn>(::dlsym(RTLD_DEFAULT, "sgemm_"));
  return blas_enabled.load(std::memory_order_relaxed) ? fn : nullptr;
}

// Row-major C [m × n] = op(A) [m × k] · op(B) [k × n] + beta · C, op(X) = Xᵀ when t_x; m, n, k ≥ 1.
void gemm(bool t_a, bool t_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
          float beta, float* c, int64_t ldc) {
  if (SgemmFn fn = blas_sgemm()) {
    // Column-major BLAS sees every row-major matrix transposed: Cᵀ = op(B)ᵀ op(A)ᵀ.
    const char ta = t_a ? 'T' : 'N', tb = t_b ? 'T' : 'N';
    const int mi = static_cast<int>(n), ni = static_cast<int>(m), ki = static_cast<int>(k);
    const int lda_i = static_cast<int>(ldb), ldb_i = static_cast<int>(lda), ldc_i = static_cast<int>(ldc);
    const float one = 1.0f;
    fn(&tb, &ta, &mi, &ni, &ki, &one, b, &lda_i, a, &ldb_i, &beta, c, &ldc_i);
    return;
  }
  auto wrap = [](const float* p, int64_t rows, int64_t cols, int64_t ld, bool t) {
    torch::Tensor x = torch::from_blob(const_cast<float*>(p), {t ? cols : rows, t ? rows : cols}, {ld, 1});
    return t ? x.t() : x;
  };
  torch::Tensor out = torch::from_blob(c, {m, n}, {ldc, 1});
  torch::Tensor prod = torch::mm(wrap(a, m, k, lda, t_a), wrap(b, k, n, ldb, t_b));
  if (beta == 0.0f)
    out.copy_(prod);
  else
    out.mul_(beta).add_(prod);
}

// ---- element-wise silu ------------------------------------------------------------------------
// exp on [-87, 88] (clamped outside) to ~2 ulp: Cody–Waite reduction and the Cephes polynomial,
// written without library calls so that the loops below vectorise.
inline float exp_clamped(float x) {
  x = std::min(std::max(x, -87.0f), 88.0f);
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round to nearest
  float r = x - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

// s ← silu(alpha · s) · inv_scale (· mask) on a rows × cols block of leading dimension ld.
TZREC_SIMD_CLONES void silu_forward(float* s, const float* mask, int64_t rows, int64_t cols, int64_t ld, float alpha,
                                    float inv_scale) {
  for (int64_t r = 0; r < rows; ++r) {
    float* row = s + r * ld;
    const float* m = mask ? mask + r * ld : nullptr;
    for (int64_t j = 0; j < cols; ++j) {
      const float z = alpha * row[j];
      const float y = z / (1.0f + exp_clamped(-z)) * inv_scale;
      row[j] = m ? y * m[j] : y;
    }
  }
}

// From s = Q Kᵀ and dp = dO Vᵀ of a block: s ← P (as silu_forward) and dp ← dL/d(Q Kᵀ)
// = dp · mask · inv_scale · alpha · silu'(alpha · s), silu'(z) = σ(z) (1 + z (1 − σ(z))).
TZREC_SIMD_CLONES void silu_backward(float* s, float* dp, const float* mask, int64_t rows, int64_t cols, int64_t ld,
                                     float alpha, float inv_scale) {
  const float grad_scale = inv_scale * alpha;
  for (int64_t r = 0; r < rows; ++r) {
    float* srow = s + r * ld;
    float* drow = dp + r * ld;
    const float* m = mask ? mask + r * ld : nullptr;
    for (int64_t j = 0; j < cols; ++j) {
      const float z = alpha * srow[j];
      const float sig = 1.0f / (1.0f + exp_clamped(-z));
      const float keep = m ? m[j] : 1.0f;
      srow[j] = z * sig * inv_scale * keep;
      drow[j] = drow[j] * keep * grad_scale * (sig * (1.0f + z * (1.0f - sig)));
    }
  }
}

// ---- masks ------------------------------------------------------------------------------------
// The valid keys of one query row as at most three sorted, disjoint, non-adjacent intervals.
struct Spans {
  std::pair<int64_t, int64_t> iv[3];  // [first, second)
  int count = 0;

  void add(int64_t a, int64_t b) {
    if (a < b) iv[count++] = {a, b};
  }
  void normalize() {
    for (int i = 1; i < count; ++i)  // insertion sort of ≤ 3 intervals
      for (int j = i; j > 0 && iv[j] < iv[j - 1]; --j) std::swap(iv[j], iv[j - 1]);
    int out = 0;
    for (int i = 0; i < count; ++i) {
      if (out > 0 && iv[i].first <= iv[out - 1].second) {
        iv[out - 1].second = std::max(iv[out - 1].second, iv[i].second);
      } else {
        iv[out++] = iv[i];
      }
    }
    count = out;
  }
  int64_t lo() const { return iv[0].first; }
  int64_t hi() const { return iv[count - 1].second; }
  // 0: no key of [j0, j1) is valid; 2: all are; 1: some.
  int cover(int64_t j0, int64_t j1) const {
    bool any = false;
    for (int i = 0; i < count; ++i) {
      if (iv[i].first <= j0 && j1 <= iv[i].second) return 2;
      any = any || (iv[i].first < j1 && iv[i].second > j0);
    }
    return any ? 1 : 0;
  }
};

// TorchEasyRec's _get_valid_attn_mask (causal) restricted to one sequence of length n: valid()
// is its element-wise definition; spans() the same set per row, for skipping and filling tiles.
class SequenceMask {
 public:
  SequenceMask(int64_t n, int64_t num_targets, bool has_targets, int64_t contextual, int64_t max_attn_len,
               int64_t min_full)
      : n_(n), has_targets_(has_targets), contextual_(contextual), max_attn_len_(max_attn_len), min_full_(min_full) {
    max_id_ = n;
    if (contextual_ > 0) max_id_ = max_id_ - contextual_ + 1;
    if (has_targets_) max_id_ -= num_targets;
  }

  // The position id of row / column x: contextual rows share id 0, targets share the id max_id.
  int64_t id(int64_t x) const {
    int64_t r = contextual_ > 0 ? std::max<int64_t>(x - contextual_ + 1, 0) : x;
    return has_targets_ ? std::min(r, max_id_) : r;
  }

  bool valid(int64_t i, int64_t j) const {
    const int64_t r = id(i), c = id(j), dist = r - c;
    bool ok = i == j || dist > 0;
    if (max_attn_len_ > 0) ok = ok && (dist <= max_attn_len_ || (min_full_ > 0 && r >= max_id_ - min_full_));
    if (contextual_ > 0) ok = ok || (r == 0 && c < max_id_);
    return ok;
  }

  // Keys j with valid(i, j): id is non-decreasing in j, so {id(j) < v} is a prefix of the keys and
  // the causal part is [window start, first key with id ≥ id(i)) plus the diagonal; contextual rows
  // (id 0) add the prefix of keys with id < max_id.
  Spans spans(int64_t i) const {
    Spans s;
    const int64_t r = id(i);
    int64_t start = 0;
    if (max_attn_len_ > 0 && !(min_full_ > 0 && r >= max_id_ - min_full_)) start = first_id_at_least(r - max_attn_len_);
    s.add(start, first_id_at_least(r));
    s.add(i, i + 1);
    if (contextual_ > 0 && r == 0) s.add(0, first_id_at_least(max_id_));
    s.normalize();
    return s;
  }

 private:
  int64_t first_id_at_least(int64_t v) const {
    int64_t lo = 0, hi = n_;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (id(mid) >= v)
        hi = mid;
      else
        lo = mid + 1;
    }
    return lo;
  }

  int64_t n_;
  bool has_targets_;
  int64_t contextual_, max_attn_len_, min_full_;
  int64_t max_id_;
};

// The Semi-Local Attention intervals of one (sequence, head) (TorchEasyRec's
// _decode_attn_func_to_mask): row i sees keys j < n with j < c0 or c1 ≤ j < c2.
class SlaMask {
 public:
  SlaMask(int64_t n, const int32_t* c0, const int32_t* c1, const int32_t* c2, int64_t stride)
      : n_(n), c0_(c0), c1_(c1), c2_(c2), stride_(stride) {}

  bool valid(int64_t i, int64_t j) const {
    const int64_t o = i * stride_;
    return j < n_ && (j < c0_[o] || (j >= c1_[o] && j < c2_[o]));
  }

  Spans spans(int64_t i) const {
    const int64_t o = i * stride_;
    Spans s;
    s.add(0, std::min<int64_t>(c0_[o], n_));
    s.add(std::max<int64_t>(c1_[o], 0), std::min<int64_t>(c2_[o], n_));
    s.normalize();
    return s;
  }

 private:
  int64_t n_;
  const int32_t *c0_, *c1_, *c2_;
  int64_t stride_;
};

// ---- the problem ------------------------------------------------------------------------------
struct Problem {
  int64_t B = 0, H = 0, A = 0, V = 0, L = 0;
  torch::Tensor offsets;  // [B + 1] int64, contiguous
  torch::Tensor targets;  // [B] int64, contiguous, or undefined
  torch::Tensor func;     // [H, 3, L] int32 or undefined
  float alpha = 1.0f, inv_scale = 1.0f;
  int64_t contextual = 0, max_attn_len = 0, min_full = 0, block = 64;

  int64_t begin(int64_t b) const { return offsets.data_ptr<int64_t>()[b]; }
  int64_t length(int64_t b) const { return begin(b + 1) - begin(b); }
};

Problem make_problem(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                     const torch::Tensor& seq_offsets, const HstuAttentionOptions& o) {
  TORCH_CHECK(q.dim() == 3, "hstu_mha: q must be [L, H, A], got ", q.sizes());
  TORCH_CHECK(k.sizes() == q.sizes(), "hstu_mha: k ", k.sizes(), " must have the shape of q ", q.sizes());
  TORCH_CHECK(v.dim() == 3 && v.size(0) == q.size(0) && v.size(1) == q.size(1),
              "hstu_mha: v must be [L, H, V] with L, H of q ", q.sizes(), ", got ", v.sizes());
  TORCH_CHECK(q.scalar_type() == torch::kFloat32 || q.scalar_type() == torch::kBFloat16,
              "hstu_mha: q, k, v must be float32 or bfloat16, got ", q.scalar_type());
  TORCH_CHECK(k.scalar_type() == q.scalar_type() && v.scalar_type() == q.scalar_type(),
              "hstu_mha: q, k, v must share one dtype, got ", q.scalar_type(), ", ", k.scalar_type(), ", ",
              v.scalar_type());
  TORCH_CHECK(q.device().is_cpu() && k.device().is_cpu() && v.device().is_cpu(), "hstu_mha: CPU tensors only");
  TORCH_CHECK(q.size(2) > 0 && v.size(2) > 0, "hstu_mha: attention and value dims must be positive");
  TORCH_CHECK(o.causal, "hstu_mha: only causal attention is supported");
  TORCH_CHECK(o.block_size >= 1, "hstu_mha: block_size must be ≥ 1, got ", o.block_size);
  TORCH_CHECK(o.max_seq_len >= 0 && o.max_attn_len >= 0 && o.contextual_seq_len >= 0 && o.min_full_attn_seq_len >= 0,
              "hstu_mha: max_seq_len, max_attn_len, contextual_seq_len and min_full_attn_seq_len must be ≥ 0");
  TORCH_CHECK(seq_offsets.dim() == 1 && seq_offsets.size(0) >= 1 && !seq_offsets.is_floating_point(),
              "hstu_mha: seq_offsets must be an integer [B + 1] tensor, got ", seq_offsets.sizes(), " ",
              seq_offsets.scalar_type());
  Problem p;
  p.L = q.size(0);
  p.H = q.size(1);
  p.A = q.size(2);
  p.V = v.size(2);
  p.B = seq_offsets.size(0) - 1;
  p.offsets = seq_offsets.to(torch::kCPU, torch::kInt64).contiguous();
  const int64_t* off = p.offsets.data_ptr<int64_t>();
  TORCH_CHECK(off[0] == 0 && off[p.B] == p.L, "hstu_mha: seq_offsets must run from 0 to L = ", p.L, ", got ", off[0],
              " .. ", off[p.B]);
  for (int64_t b = 0; b < p.B; ++b) {
    TORCH_CHECK(off[b + 1] >= off[b], "hstu_mha: seq_offsets decrease at ", b, ": ", off[b], " > ", off[b + 1]);
    TORCH_CHECK(off[b + 1] - off[b] <= o.max_seq_len, "hstu_mha: sequence ", b, " has ", off[b + 1] - off[b],
                " tokens, more than max_seq_len ", o.max_seq_len);
  }
  if (o.num_targets.defined()) {
    TORCH_CHECK(o.num_targets.dim() == 1 && o.num_targets.size(0) == p.B && !o.num_targets.is_floating_point(),
                "hstu_mha: num_targets must be an integer [B] = [", p.B, "] tensor, got ", o.num_targets.sizes());
    p.targets = o.num_targets.to(torch::kCPU, torch::kInt64).contiguous();
    const int64_t* t = p.targets.data_ptr<int64_t>();
    for (int64_t b = 0; b < p.B; ++b)
      TORCH_CHECK(t[b] >= 0 && t[b] <= off[b + 1] - off[b], "hstu_mha: num_targets[", b, "] = ", t[b],
                  " is outside [0, length ", off[b + 1] - off[b], "]");
  }
  if (o.attn_func.defined()) {
    TORCH_CHECK(o.attn_func.dim() == 3 && o.attn_func.size(0) == p.H && o.attn_func.size(1) == 3 &&
                    o.attn_func.size(2) == p.L && !o.attn_func.is_floating_point(),
                "hstu_mha: attn_func must be an integer [H, 3, L] = [", p.H, ", 3, ", p.L, "] tensor, got ",
                o.attn_func.sizes());
    p.func = o.attn_func.to(torch::kCPU, torch::kInt32);
  }
  const int64_t scaling = o.scaling_seqlen == -1 ? o.max_seq_len : o.scaling_seqlen;
  TORCH_CHECK(scaling > 0 || p.L == 0, "hstu_mha: scaling_seqlen (", o.scaling_seqlen, ", max_seq_len ", o.max_seq_len,
              ") must be positive");
  TORCH_CHECK(std::isfinite(o.alpha), "hstu_mha: alpha must be finite");
  p.alpha = static_cast<float>(o.alpha);
  p.inv_scale = scaling > 0 ? 1.0f / static_cast<float>(scaling) : 0.0f;
  p.contextual = o.contextual_seq_len;
  p.max_attn_len = o.max_attn_len;
  p.min_full = o.min_full_attn_seq_len;
  p.block = o.block_size;
  return p;
}

// ---- per (sequence, head) work --------------------------------------------------------------
// Rows of one head of one sequence: base points at its first row, rows are `stride` apart.
template <typename T>
struct HeadView {
  T* base;
  int64_t stride;
};

template <typename T>
HeadView<T> head_view(const torch::Tensor& x, const Problem& p, int64_t b, int64_t h) {
  return {x.data_ptr<T>() + p.begin(b) * x.stride(0) + h * x.stride(1), x.stride(0)};
}

template <typename T>
void load(HeadView<T> src, int64_t n, int64_t d, float* dst) {
  for (int64_t r = 0; r < n; ++r) {
    const T* s = src.base + r * src.stride;
    for (int64_t c = 0; c < d; ++c) dst[r * d + c] = static_cast<float>(s[c]);
  }
}

template <typename T>
void store(const float* src, int64_t n, int64_t d, HeadView<T> dst) {
  for (int64_t r = 0; r < n; ++r) {
    T* o = dst.base + r * dst.stride;
    for (int64_t c = 0; c < d; ++c) o[c] = static_cast<T>(src[r * d + c]);
  }
}

// Per-thread buffers, sized for the longest sequence. Kept by each thread between calls (grown,
// never shrunk: longest · (4 A + 3 V + 2 block) + block² floats): buffers of that size allocated per
// call are mapped and unmapped each time, and their page faults cost more than the copies into them.
struct Scratch {
  std::unique_ptr<float[]> buffer;
  size_t capacity = 0;
  float *q, *k, *v, *o, *dq, *dk, *dv, *s, *dp, *mask;
  std::vector<Spans> spans;
  std::vector<int> row_cover;

  void prepare(int64_t longest, int64_t A, int64_t V, int64_t block) {
    const size_t na = static_cast<size_t>(longest * A), nv = static_cast<size_t>(longest * V),
                 strip = static_cast<size_t>(block * longest), tile = static_cast<size_t>(block * block);
    const size_t need = 4 * na + 3 * nv + 2 * strip + tile;
    if (need > capacity) {
      buffer.reset(new float[need]);
      capacity = need;
    }
    q = buffer.get();
    k = q + na, dq = k + na, dk = dq + na, v = dk + na, o = v + nv, dv = o + nv, s = dv + nv, dp = s + strip;
    mask = dp + strip;
    if (spans.size() < static_cast<size_t>(longest)) spans.resize(longest);
    if (row_cover.size() < static_cast<size_t>(block)) row_cover.resize(block);
  }
};

Scratch& thread_scratch() {
  thread_local Scratch scratch;
  return scratch;
}

// Calls f(i0, rows, j0, cols, mask) over the tiles of an n × n score matrix that the mask does not
// empty. Consecutive tiles of a row block that the mask keeps whole go in one call with mask
// nullptr (one wider product instead of several small ones); a tile the mask cuts goes alone with
// mask = its rows × cols 0 / 1 values (leading dim cols), evaluated element by element.
template <class Mask, class F>
void for_each_tile(const Mask& mask, int64_t n, int64_t block, Scratch& s, F&& f) {
  for (int64_t i = 0; i < n; ++i) s.spans[i] = mask.spans(i);
  for (int64_t i0 = 0; i0 < n; i0 += block) {
    const int64_t rows = std::min(block, n - i0);
    int64_t lo = n, hi = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const Spans& sp = s.spans[i0 + r];
      if (sp.count == 0) continue;
      lo = std::min(lo, sp.lo());
      hi = std::max(hi, sp.hi());
    }
    int64_t run = -1;  // start of the pending run of whole tiles
    int64_t j0 = (lo / block) * block;
    for (; j0 < hi; j0 += block) {
      const int64_t cols = std::min(block, n - j0);
      bool all_full = true, all_empty = true;
      for (int64_t r = 0; r < rows; ++r) {
        const int c = s.spans[i0 + r].cover(j0, j0 + cols);
        s.row_cover[r] = c;
        all_full = all_full && c == 2;
        all_empty = all_empty && c == 0;
      }
      if (all_full) {
        if (run < 0) run = j0;
        continue;
      }
      if (run >= 0) f(i0, rows, run, j0 - run, nullptr);
      run = -1;
      if (all_empty) continue;
      for (int64_t r = 0; r < rows; ++r) {
        float* mr = s.mask + r * cols;
        const int c = s.row_cover[r];
        if (c != 1) {
          std::fill(mr, mr + cols, c == 2 ? 1.0f : 0.0f);
        } else {
          for (int64_t j = 0; j < cols; ++j) mr[j] = mask.valid(i0 + r, j0 + j) ? 1.0f : 0.0f;
        }
      }
      f(i0, rows, j0, cols, s.mask);
    }
    if (run >= 0) f(i0, rows, run, std::min(j0, n) - run, nullptr);
  }
}

// Runs f(mask) with the mask of sequence b, head h.
template <class F>
void with_mask(const Problem& p, int64_t b, int64_t h, F&& f) {
  const int64_t n = p.length(b);
  if (p.func.defined()) {
    const int32_t* base = p.func.data_ptr<int32_t>() + h * p.func.stride(0) + p.begin(b) * p.func.stride(2);
    f(SlaMask(n, base, base + p.func.stride(1), base + 2 * p.func.stride(1), p.func.stride(2)));
  } else {
    const int64_t t = p.targets.defined() ? p.targets.data_ptr<int64_t>()[b] : 0;
    f(SequenceMask(n, t, p.targets.defined(), p.contextual, p.max_attn_len, p.min_full));
  }
}

template <typename T>
void forward_item(const Problem& p, const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                  torch::Tensor& out, int64_t b, int64_t h, Scratch& s) {
  const int64_t n = p.length(b), A = p.A, V = p.V, bs = p.block;
  load(head_view<T>(q, p, b, h), n, A, s.q);
  load(head_view<T>(k, p, b, h), n, A, s.k);
  load(head_view<T>(v, p, b, h), n, V, s.v);
  std::fill(s.o, s.o + n * V, 0.0f);
  with_mask(p, b, h, [&](const auto& mask) {
    for_each_tile(mask, n, bs, s, [&](int64_t i0, int64_t rows, int64_t j0, int64_t cols, const float* m) {
      gemm(false, true, rows, cols, A, s.q + i0 * A, A, s.k + j0 * A, A, 0.0f, s.s, cols);
      silu_forward(s.s, m, rows, cols, cols, p.alpha, p.inv_scale);
      gemm(false, false, rows, V, cols, s.s, cols, s.v + j0 * V, V, 1.0f, s.o + i0 * V, V);
    });
  });
  store(s.o, n, V, head_view<T>(out, p, b, h));
}

template <typename T>
void backward_item(const Problem& p, const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                   const torch::Tensor& dout, torch::Tensor& dq, torch::Tensor& dk, torch::Tensor& dv, int64_t b,
                   int64_t h, Scratch& s) {
  const int64_t n = p.length(b), A = p.A, V = p.V, bs = p.block;
  load(head_view<T>(q, p, b, h), n, A, s.q);
  load(head_view<T>(k, p, b, h), n, A, s.k);
  load(head_view<T>(v, p, b, h), n, V, s.v);
  load(head_view<T>(dout, p, b, h), n, V, s.o);
  std::fill(s.dq, s.dq + n * A, 0.0f);
  std::fill(s.dk, s.dk + n * A, 0.0f);
  std::fill(s.dv, s.dv + n * V, 0.0f);
  with_mask(p, b, h, [&](const auto& mask) {
    for_each_tile(mask, n, bs, s, [&](int64_t i0, int64_t rows, int64_t j0, int64_t cols, const float* m) {
      const float* qi = s.q + i0 * A;
      const float* kj = s.k + j0 * A;
      const float* doi = s.o + i0 * V;
      gemm(false, true, rows, cols, A, qi, A, kj, A, 0.0f, s.s, cols);
      gemm(false, true, rows, cols, V, doi, V, s.v + j0 * V, V, 0.0f, s.dp, cols);
      silu_backward(s.s, s.dp, m, rows, cols, cols, p.alpha, p.inv_scale);
      gemm(true, false, cols, V, rows, s.s, cols, doi, V, 1.0f, s.dv + j0 * V, V);
      gemm(false, false, rows, A, cols, s.dp, cols, kj, A, 1.0f, s.dq + i0 * A, A);
      gemm(true, false, cols, A, rows, s.dp, cols, qi, A, 1.0f, s.dk + j0 * A, A);
    });
  });
  store(s.dq, n, A, head_view<T>(dq, p, b, h));
  store(s.dk, n, A, head_view<T>(dk, p, b, h));
  store(s.dv, n, V, head_view<T>(dv, p, b, h));
}

// Runs f(b, h, scratch) for every (sequence, head) with tokens on at::get_num_threads() threads.
// Items are handed out longest sequence first from a shared counter (at::parallel_for's static
// chunks would give one thread all the long ones); an item's result depends only on its inputs.
template <class F>
void for_each_item(const Problem& p, F&& f) {
  std::vector<std::pair<int64_t, int64_t>> items;  // (b, h)
  int64_t longest = 0;
  for (int64_t b = 0; b < p.B; ++b) {
    const int64_t n = p.length(b);
    if (n == 0) continue;
    longest = std::max(longest, n);
    for (int64_t h = 0; h < p.H; ++h) items.emplace_back(b, h);
  }
  if (items.empty()) return;
  std::stable_sort(items.begin(), items.end(),
                   [&](const auto& x, const auto& y) { return p.length(x.first) > p.length(y.first); });
  const int64_t threads = std::min<int64_t>(at::get_num_threads(), static_cast<int64_t>(items.size()));
  std::atomic<size_t> next{0};
  at::parallel_for(0, threads, 1, [&](int64_t, int64_t) {
    Scratch& s = thread_scratch();
    s.prepare(longest, p.A, p.V, p.block);
    for (size_t i = next++; i < items.size(); i = next++) f(items[i].first, items[i].second, s);
  });
}

// Calls f(T()) with T the element type of x (float or c10::BFloat16).
template <class F>
void dispatch(const torch::Tensor& x, F&& f) {
  if (x.scalar_type() == torch::kBFloat16)
    f(c10::BFloat16());
  else
    f(0.0f);
}

torch::Tensor run_forward(const Problem& p, const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  torch::Tensor out = torch::empty({p.L, p.H, p.V}, q.options());
  dispatch(q, [&](auto zero) {
    using T = decltype(zero);
    for_each_item(p, [&](int64_t b, int64_t h, Scratch& s) { forward_item<T>(p, q, k, v, out, b, h, s); });
  });
  return out;
}

torch::Tensor unit_last_dim(const torch::Tensor& x) { return x.stride(2) == 1 ? x : x.contiguous(); }

// ---- autograd -------------------------------------------------------------------------------
// The problem travels from forward to backward in an IValue capsule.
struct ProblemCapsule : torch::CustomClassHolder {
  explicit ProblemCapsule(std::shared_ptr<const Problem> p) : problem(std::move(p)) {}
  std::shared_ptr<const Problem> problem;
};

class HstuAttentionFunction : public torch::autograd::Function<HstuAttentionFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, const std::shared_ptr<const Problem>& problem) {
    ctx->save_for_backward({q, k, v});
    ctx->saved_data["problem"] = c10::IValue::make_capsule(c10::make_intrusive<ProblemCapsule>(problem));
    return run_forward(*problem, q, k, v);
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &q = saved[0], &k = saved[1], &v = saved[2];
    const Problem& p =
        *c10::static_intrusive_pointer_cast<ProblemCapsule>(ctx->saved_data["problem"].toCapsule())->problem;
    const torch::Tensor dout = grads[0].to(q.scalar_type()).contiguous();
    torch::Tensor dq = torch::empty({p.L, p.H, p.A}, q.options());
    torch::Tensor dk = torch::empty({p.L, p.H, p.A}, q.options());
    torch::Tensor dv = torch::empty({p.L, p.H, p.V}, q.options());
    dispatch(q, [&](auto zero) {
      using T = decltype(zero);
      for_each_item(p,
                    [&](int64_t b, int64_t h, Scratch& s) { backward_item<T>(p, q, k, v, dout, dq, dk, dv, b, h, s); });
    });
    return {dq, dk, dv, torch::Tensor()};
  }
};

}  // namespace

torch::Tensor hstu_mha(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                       const torch::Tensor& seq_offsets, const HstuAttentionOptions& options) {
  auto problem = std::make_shared<const Problem>(make_problem(q, k, v, seq_offsets, options));
  const torch::Tensor q1 = unit_last_dim(q), k1 = unit_last_dim(k), v1 = unit_last_dim(v);
  const bool needs_grad =
      torch::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad());
  if (!needs_grad) return run_forward(*problem, q1, k1, v1);
  return HstuAttentionFunction::apply(q1, k1, v1, problem);
}

bool set_hstu_blas_enabled(bool enabled) { return blas_enabled.exchange(enabled); }

torch::Tensor build_sla_func_tensor(int64_t num_heads, int64_t sla_k1, int64_t sla_k2, const torch::Tensor& seq_offsets,
                                    int64_t total_q, const torch::Tensor& num_targets, int64_t contextual_seq_len) {
  TORCH_CHECK(sla_k1 >= 0 && sla_k2 >= 0 && contextual_seq_len >= 0,
              "build_sla_func_tensor: sla_k1, sla_k2 and contextual_seq_len must be ≥ 0, got ", sla_k1, ", ", sla_k2,
              ", ", contextual_seq_len);
  TORCH_CHECK(num_heads >= 1, "build_sla_func_tensor: num_heads must be ≥ 1");
  TORCH_CHECK(seq_offsets.dim() == 1 && seq_offsets.size(0) >= 1, "build_sla_func_tensor: seq_offsets must be [B + 1]");
  const torch::Tensor off_t = seq_offsets.to(torch::kCPU, torch::kInt64).contiguous();
  const int64_t* off = off_t.data_ptr<int64_t>();
  const int64_t B = off_t.size(0) - 1;
  TORCH_CHECK(off[0] == 0 && off[B] == total_q,
              "build_sla_func_tensor: seq_offsets must run from 0 to total_q = ", total_q);
  torch::Tensor t_t;
  if (num_targets.defined()) {
    TORCH_CHECK(num_targets.dim() == 1 && num_targets.size(0) == B, "build_sla_func_tensor: num_targets must be [B]");
    t_t = num_targets.to(torch::kCPU, torch::kInt64).contiguous();
  }
  const int64_t k2 = std::max(sla_k2, contextual_seq_len);
  torch::Tensor func = torch::empty({3, total_q}, torch::kInt32);
  int32_t* c0 = func.data_ptr<int32_t>();
  int32_t* c1 = c0 + total_q;
  int32_t* c2 = c1 + total_q;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n = off[b + 1] - off[b];
    TORCH_CHECK(n >= 0, "build_sla_func_tensor: seq_offsets decrease at ", b);
    const int64_t t = t_t.defined() ? t_t.data_ptr<int64_t>()[b] : 0;
    // TorchEasyRec clamps the history end at 0 when num_targets exceeds the length.
    const int64_t hist = std::max<int64_t>(n - t, 0);
    for (int64_t pos = 0; pos < n; ++pos) {
      const int64_t i = off[b] + pos;
      if (pos < hist) {
        c0[i] = static_cast<int32_t>(std::min(pos + 1, k2));
        c1[i] = static_cast<int32_t>(std::max(pos - sla_k1 + 1, k2));
        c2[i] = static_cast<int32_t>(pos + 1);
      } else {
        c0[i] = c1[i] = c2[i] = static_cast<int32_t>(hist);
      }
    }
  }
  return func.unsqueeze(0).expand({num_heads, 3, total_q});
}

}  // namespace tzrec::nn
