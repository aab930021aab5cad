#include "embedding/tbe_kernels.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <ATen/Parallel.h>
#include <c10/util/Half.h>

#if defined(__x86_64__)
// Hot loops are compiled for AVX-512, AVX2+FMA+F16C and baseline x86-64; the loader picks one.
#define TZREC_SIMD_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TZREC_SIMD_CLONES
#endif

namespace tzrec::embedding::tbe {
namespace {

// binary16 storage type: GCC's _Float16 where available (vectorised conversions with F16C),
// otherwise c10::Half. Both are IEEE binary16 with round-to-nearest-even conversion from float.
#if defined(__x86_64__) && defined(__FLT16_MAX__)
using half_t = _Float16;
#else
using half_t = c10::Half;
#endif
static_assert(sizeof(half_t) == 2, "binary16 storage must be 2 bytes");

// Rows are gathered at random from tables far larger than the caches: the loops prefetch the rows
// they will need a few iterations ahead so that several memory accesses are in flight at once.
constexpr int64_t kPrefetchIds = 8;   // forward: ids ahead
constexpr int64_t kPrefetchRows = 8;  // backward: distinct rows ahead (weights and state)
constexpr int64_t kPrefetchGrads = 4;  // backward: distinct rows ahead (pooled gradient blocks)

// Prefetches the cache lines of [p, p + bytes) (at most 1 KiB); write: 1 if they will be written.
inline void prefetch_row(const void* p, int64_t bytes, int write) {
  const char* c = static_cast<const char*>(p);
  bytes = std::min<int64_t>(bytes, 1024);
  for (int64_t o = 0; o < bytes; o += 64) {
    if (write) {
      __builtin_prefetch(c + o, 1, 3);
    } else {
      __builtin_prefetch(c + o, 0, 3);
    }
  }
}

// ---- forward -------------------------------------------------------------------------------------

// out [D] = sum_i w_i * table[ids[i]] (then / n for mean); weights may be nullptr.
TZREC_SIMD_CLONES
void pool_bag_f32(int64_t D, const float* __restrict table, const int64_t* ids, int64_t n,
                  int64_t n_ahead, const float* weights, float scale_after, float* __restrict out) {
  for (int64_t d = 0; d < D; ++d) out[d] = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    if (i + kPrefetchIds < n_ahead) prefetch_row(table + ids[i + kPrefetchIds] * D, D * sizeof(float), 0);
    const float* __restrict row = table + ids[i] * D;
    const float a = weights ? weights[i] : 1.0f;
    for (int64_t d = 0; d < D; ++d) out[d] += a * row[d];
  }
  if (scale_after != 1.0f) {
    for (int64_t d = 0; d < D; ++d) out[d] *= scale_after;
  }
}

TZREC_SIMD_CLONES
void pool_bag_f16(int64_t D, const half_t* __restrict table, const int64_t* ids, int64_t n,
                  int64_t n_ahead, const float* weights, float scale_after, float* __restrict out) {
  for (int64_t d = 0; d < D; ++d) out[d] = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    if (i + kPrefetchIds < n_ahead) prefetch_row(table + ids[i + kPrefetchIds] * D, D * sizeof(half_t), 0);
    const half_t* __restrict row = table + ids[i] * D;
    const float a = weights ? weights[i] : 1.0f;
    for (int64_t d = 0; d < D; ++d) out[d] += a * static_cast<float>(row[d]);
  }
  if (scale_after != 1.0f) {
    for (int64_t d = 0; d < D; ++d) out[d] *= scale_after;
  }
}

// ---- backward ------------------------------------------------------------------------------------

// One occurrence of a row in the batch: the pooled-gradient block it reads and its factor.
struct Occurrence {
  int64_t row;    // row of the table
  int64_t src;    // offset of grad_output[b, output_offset] in the flat gradient
  float scale;    // w_i * (mean ? 1 / L_b : 1)
};

// Stable LSD radix sort of `v` by row (rows in [0, num_rows)); `tmp` is scratch of the same size.
void radix_sort_by_row(std::vector<Occurrence>& v, std::vector<Occurrence>& tmp, int64_t num_rows) {
  constexpr int kBits = 11;
  constexpr int64_t kBuckets = int64_t{1} << kBits;
  int bits = 0;
  while (bits < 63 && (int64_t{1} << bits) < num_rows) ++bits;
  if (v.size() < 2 || bits == 0) return;
  if (v.size() < 256) {
    std::stable_sort(v.begin(), v.end(),
                     [](const Occurrence& a, const Occurrence& b) { return a.row < b.row; });
    return;
  }
  tmp.resize(v.size());
  std::vector<int64_t> count(kBuckets);
  for (int shift = 0; shift < bits; shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (const Occurrence& o : v) ++count[(o.row >> shift) & (kBuckets - 1)];
    int64_t sum = 0;
    for (int64_t& c : count) {
      const int64_t here = c;
      c = sum;
      sum += here;
    }
    for (const Occurrence& o : v) tmp[count[(o.row >> shift) & (kBuckets - 1)]++] = o;
    v.swap(tmp);
  }
}

// g [D] = sum over occ of occ.scale * grad_output[occ.src : occ.src + D].
TZREC_SIMD_CLONES
void aggregate_row(int64_t D, const Occurrence* occ, int64_t n, const float* __restrict grad_output,
                   float* __restrict g) {
  for (int64_t d = 0; d < D; ++d) g[d] = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float* __restrict src = grad_output + occ[i].src;
    const float a = occ[i].scale;
    for (int64_t d = 0; d < D; ++d) g[d] += a * src[d];
  }
}

TZREC_SIMD_CLONES
void half_to_float(int64_t D, const half_t* __restrict src, float* __restrict dst) {
  for (int64_t d = 0; d < D; ++d) dst[d] = static_cast<float>(src[d]);
}

TZREC_SIMD_CLONES
void float_to_half(int64_t D, const float* __restrict src, half_t* __restrict dst) {
  for (int64_t d = 0; d < D; ++d) dst[d] = static_cast<half_t>(src[d]);
}

// The sorted occurrences of one trainable table and where each distinct row's run starts.
struct TableRuns {
  std::vector<Occurrence> occurrences;  // sorted by row
  std::vector<int64_t> run_starts;      // [num_distinct_rows + 1], last = occurrences.size()
};

void collect_runs(const std::vector<FeatureBuffers>& features, int64_t table, int64_t batch_size,
                  int64_t output_stride, int64_t num_rows, TableRuns& runs) {
  int64_t total = 0;
  for (const FeatureBuffers& f : features) {
    if (f.table == table) total += f.offsets[batch_size] - f.offsets[0];
  }
  std::vector<Occurrence>& occ = runs.occurrences;
  occ.resize(total);
  int64_t k = 0;
  for (const FeatureBuffers& f : features) {
    if (f.table != table) continue;
    for (int64_t b = 0; b < batch_size; ++b) {
      const int64_t begin = f.offsets[b], end = f.offsets[b + 1];
      const float bag_scale = f.mean && end > begin ? 1.0f / static_cast<float>(end - begin) : 1.0f;
      const int64_t src = b * output_stride + f.output_offset;
      for (int64_t i = begin; i < end; ++i) {
        const float w = f.per_id_weights ? f.per_id_weights[i] : 1.0f;
        occ[k++] = Occurrence{f.ids[i], src, w * bag_scale};
      }
    }
  }
  std::vector<Occurrence> tmp;
  radix_sort_by_row(occ, tmp, num_rows);
  runs.run_starts.clear();
  for (int64_t i = 0; i < total; ++i) {
    if (i == 0 || occ[i].row != occ[i - 1].row) runs.run_starts.push_back(i);
  }
  runs.run_starts.push_back(total);
}

int64_t state_stride(StateWidth width, int64_t dim) {
  return width == StateWidth::kFull ? dim : (width == StateWidth::kRow ? 1 : 0);
}

}  // namespace

int64_t find_out_of_range_id(const int64_t* ids, int64_t num_ids, int64_t num_rows) {
  std::atomic<int64_t> first_bad{num_ids};
  parallel_for(num_ids, 1 << 16, [&](int64_t begin, int64_t end) {
    bool bad = false;
    for (int64_t i = begin; i < end; ++i) bad |= (ids[i] < 0) | (ids[i] >= num_rows);
    if (!bad) return;
    for (int64_t i = begin; i < end; ++i) {
      if (ids[i] < 0 || ids[i] >= num_rows) {
        int64_t cur = first_bad.load();
        while (i < cur && !first_bad.compare_exchange_weak(cur, i)) {
        }
        return;
      }
    }
  });
  const int64_t i = first_bad.load();
  return i == num_ids ? -1 : i;
}

void pooled_forward(const std::vector<TableBuffers>& tables,
                    const std::vector<FeatureBuffers>& features, int64_t batch_size, float* output,
                    int64_t output_stride) {
  parallel_for(batch_size, 16, [&](int64_t b_begin, int64_t b_end) {
    // Feature by feature over this range of bags: the ids are read in order, so the rows of the
    // next bags can be prefetched.
    for (const FeatureBuffers& f : features) {
      const TableBuffers& t = tables[f.table];
      const int64_t range_end = f.offsets[b_end];
      for (int64_t b = b_begin; b < b_end; ++b) {
        const int64_t begin = f.offsets[b], n = f.offsets[b + 1] - begin;
        const float* w = f.per_id_weights ? f.per_id_weights + begin : nullptr;
        const float scale = f.mean && n > 0 ? 1.0f / static_cast<float>(n) : 1.0f;
        float* out = output + b * output_stride + f.output_offset;
        if (t.weight_type == WeightType::kFloat32) {
          pool_bag_f32(t.dim, static_cast<const float*>(t.weight), f.ids + begin, n,
                       range_end - begin, w, scale, out);
        } else {
          pool_bag_f16(t.dim, static_cast<const half_t*>(t.weight), f.ids + begin, n,
                       range_end - begin, w, scale, out);
        }
      }
    }
  });
}

void backward_update(const std::vector<TableBuffers>& tables,
                     const std::vector<FeatureBuffers>& features, int64_t batch_size,
                     const float* grad_output, int64_t output_stride,
                     const OptimizerStateLayout& layout) {
  std::vector<int64_t> trainable;
  int64_t max_dim = 0;
  for (size_t t = 0; t < tables.size(); ++t) {
    if (tables[t].trainable) trainable.push_back(static_cast<int64_t>(t));
    max_dim = std::max(max_dim, tables[t].dim);
  }
  if (trainable.empty()) return;
  // Phase 1 (parallel over tables): occurrences of each table sorted by row.
  std::vector<TableRuns> runs(trainable.size());
  parallel_for(static_cast<int64_t>(trainable.size()), 1, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int64_t t = trainable[k];
      collect_runs(features, t, batch_size, output_stride, tables[t].num_rows, runs[k]);
    }
  });
  // Phase 2 (parallel over the distinct rows of all tables): aggregate and update each row.
  std::vector<int64_t> first_row(trainable.size() + 1, 0);  // global index of each table's runs
  for (size_t k = 0; k < trainable.size(); ++k) {
    first_row[k + 1] = first_row[k] + static_cast<int64_t>(runs[k].run_starts.size()) - 1;
  }
  parallel_for(first_row.back(), 64, [&](int64_t begin, int64_t end) {
    std::vector<float> g(max_dim), w_buf(max_dim);
    int64_t k = std::upper_bound(first_row.begin(), first_row.end(), begin) - first_row.begin() - 1;
    for (int64_t r = begin; r < end; ++r) {
      while (r >= first_row[k + 1]) ++k;
      const TableBuffers& t = tables[trainable[k]];
      const TableRuns& tr = runs[k];
      const int64_t run = r - first_row[k];
      const int64_t lo = tr.run_starts[run], hi = tr.run_starts[run + 1];
      const int64_t row = tr.occurrences[lo].row;
      const int64_t D = t.dim;
      const int64_t num_runs = first_row[k + 1] - first_row[k];
      if (run + kPrefetchRows < num_runs) {
        const int64_t ahead = tr.occurrences[tr.run_starts[run + kPrefetchRows]].row;
        const int64_t wbytes = D * (t.weight_type == WeightType::kFloat32 ? 4 : 2);
        prefetch_row(static_cast<const char*>(t.weight) + ahead * wbytes, wbytes, 1);
        if (t.momentum1) {
          const int64_t s1 = state_stride(layout.momentum1, D);
          prefetch_row(t.momentum1 + ahead * s1, s1 * 4, 1);
        }
        if (t.momentum2) {
          const int64_t s2 = state_stride(layout.momentum2, D);
          prefetch_row(t.momentum2 + ahead * s2, s2 * 4, 1);
        }
      }
      if (run + kPrefetchGrads < num_runs) {
        const int64_t a_lo = tr.run_starts[run + kPrefetchGrads];
        const int64_t a_hi = std::min(tr.run_starts[run + kPrefetchGrads + 1], a_lo + 8);
        for (int64_t i = a_lo; i < a_hi; ++i) {
          prefetch_row(grad_output + tr.occurrences[i].src, D * 4, 0);
        }
      }
      aggregate_row(D, tr.occurrences.data() + lo, hi - lo, grad_output, g.data());
      float* m1 = t.momentum1 ? t.momentum1 + row * state_stride(layout.momentum1, D) : nullptr;
      float* m2 = t.momentum2 ? t.momentum2 + row * state_stride(layout.momentum2, D) : nullptr;
      if (t.weight_type == WeightType::kFloat32) {
        apply_row_update(t.scalars, D, static_cast<float*>(t.weight) + row * D, g.data(), m1, m2);
      } else {
        half_t* w = static_cast<half_t*>(t.weight) + row * D;
        half_to_float(D, w, w_buf.data());
        apply_row_update(t.scalars, D, w_buf.data(), g.data(), m1, m2);
        float_to_half(D, w_buf.data(), w);
      }
    }
  });
}

void advise_huge_pages(void* p, int64_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (p == nullptr || bytes < static_cast<int64_t>(2 * kHuge)) return;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + static_cast<uintptr_t>(bytes)) & ~(kHuge - 1);
  // Advisory only: failure (e.g. THP disabled) leaves ordinary pages, which are correct.
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t threads = std::max<int64_t>(at::get_num_threads(), 1);
  // A few chunks per thread balance uneven rows (Zipf-skewed ids make some runs long).
  const int64_t chunk = std::max(grain, (n + 4 * threads - 1) / (4 * threads));
  const int64_t chunks = (n + chunk - 1) / chunk;
  if (chunks <= 1 || threads <= 1 || at::in_parallel_region()) {
    fn(0, n);
    return;
  }
  // Chunks are claimed from a shared counter by the caller and by helper tasks on torch's
  // inter-op pool. A helper that starts late finds nothing left and exits, so the caller never
  // waits for a task that has not started (no deadlock when the pool is busy); it waits only for
  // claimed chunks to finish. The state is shared so that late helpers never touch freed memory.
  struct Shared {
    std::atomic<int64_t> next{0};
    int64_t done = 0;
    std::mutex mu;
    std::condition_variable cv;
    std::exception_ptr error;
  };
  auto shared = std::make_shared<Shared>();
  const std::function<void(int64_t, int64_t)>* fn_ptr = &fn;
  auto work = [shared, fn_ptr, n, chunk, chunks]() {
    for (;;) {
      const int64_t c = shared->next.fetch_add(1);
      if (c >= chunks) return;
      std::exception_ptr error;
      try {
        (*fn_ptr)(c * chunk, std::min(n, (c + 1) * chunk));
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(shared->mu);
      if (error && !shared->error) shared->error = error;
      if (++shared->done == chunks) shared->cv.notify_all();
    }
  };
  const int64_t helpers = std::min(threads, chunks) - 1;
  for (int64_t h = 0; h < helpers; ++h) at::launch(work);
  work();
  std::unique_lock<std::mutex> lock(shared->mu);
  shared->cv.wait(lock, [&] { return shared->done == chunks; });
  if (shared->error) std::rethrow_exception(shared->error);
}

}  // namespace tzrec::embedding::tbe
