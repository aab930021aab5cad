#include "embedding/tbe_kernels.h"

#include <algorithm>
#include <atomic>
#include <exception>

#include <ATen/Parallel.h>
#include <c10/util/Half.h>

#include "base/simd_clones.h"


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
constexpr int64_t kPrefetchRows = 8;  // backward update: rows ahead (weights and state)

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

// Pools bags [b_begin, b_end) of feature f from `table` (T: float or half_t) into
// output[b, output_offset : output_offset + D]: sum_i w_i * row(ids[i]) (then / L for mean; 0 for
// an empty bag). The rows kPrefetchIds ids ahead (across bag boundaries) are prefetched.
template <typename T>
inline __attribute__((always_inline)) void pool_feature(int64_t D, const T* __restrict table,
                                                        const FeatureBuffers& f, int64_t b_begin,
                                                        int64_t b_end, float* __restrict output,
                                                        int64_t output_stride) {
  const int64_t* __restrict ids = f.ids;
  const int64_t ids_end = f.offsets[b_end];
  for (int64_t b = b_begin; b < b_end; ++b) {
    const int64_t begin = f.offsets[b], end = f.offsets[b + 1];
    float* __restrict out = output + b * output_stride + f.output_offset;
    for (int64_t d = 0; d < D; ++d) out[d] = 0.0f;
    for (int64_t i = begin; i < end; ++i) {
      if (i + kPrefetchIds < ids_end) prefetch_row(table + ids[i + kPrefetchIds] * D, D * sizeof(T), 0);
      const T* __restrict row = table + ids[i] * D;
      const float a = f.per_id_weights ? f.per_id_weights[i] : 1.0f;
      for (int64_t d = 0; d < D; ++d) out[d] += a * static_cast<float>(row[d]);
    }
    if (f.mean && end > begin) {
      const float scale = 1.0f / static_cast<float>(end - begin);
      for (int64_t d = 0; d < D; ++d) out[d] *= scale;
    }
  }
}

TZREC_SIMD_CLONES
void pool_feature_f32(int64_t D, const float* table, const FeatureBuffers& f, int64_t b_begin,
                      int64_t b_end, float* output, int64_t output_stride) {
  pool_feature(D, table, f, b_begin, b_end, output, output_stride);
}

TZREC_SIMD_CLONES
void pool_feature_f16(int64_t D, const half_t* table, const FeatureBuffers& f, int64_t b_begin,
                      int64_t b_end, float* output, int64_t output_stride) {
  pool_feature(D, table, f, b_begin, b_end, output, output_stride);
}

// ---- backward ------------------------------------------------------------------------------------
//
// The backward runs as tasks, one per (trainable table, shard of its rows); a row belongs to shard
// shard_of(row). A task reads its table's ids in batch order (features, then bags, then ids) and
// adds each occurrence into its row's gradient accumulator (a slot, numbered in order of first
// occurrence); the pooled-gradient blocks are thus read in order. The occurrences of a table split
// into shards are first grouped by shard in one pass (group_by_shard), so that each task reads its
// own only. A task then updates its rows one after the other, prefetching the weights and state
// of the rows ahead. Every row is owned by exactly one task and summed in batch order, so results
// depend neither on the number of threads nor on the number of shards.

// Row -> slot map of one task: open addressing with linear probing. Entries carry the stamp of the
// task that wrote them, so starting a task clears nothing.
class RowSlotMap {
 public:
  // Starts an empty map for about `expected` distinct rows.
  void start(int64_t expected) {
    int64_t capacity = 64;
    while (capacity < 2 * expected && capacity < (int64_t{1} << 40)) capacity <<= 1;
    set_capacity(capacity);
    rows_.clear();
  }

  // Slot of `row`, inserting it (as slot size() - 1) when new; *inserted says which.
  int64_t find_or_insert(int64_t row, bool* inserted) {
    for (uint64_t h = hash(row);; h = (h + 1) & mask_) {
      Entry& e = entries_[h];
      if (e.stamp != stamp_) {
        const int64_t slot = static_cast<int64_t>(rows_.size());
        e = Entry{row, static_cast<uint32_t>(slot), stamp_};
        rows_.push_back(row);
        *inserted = true;
        if (2 * static_cast<int64_t>(rows_.size()) > static_cast<int64_t>(mask_ + 1)) grow();
        return slot;
      }
      if (e.row == row) {
        *inserted = false;
        return e.slot;
      }
    }
  }

  int64_t size() const { return static_cast<int64_t>(rows_.size()); }
  const std::vector<int64_t>& rows() const { return rows_; }  // slot -> row

 private:
  struct Entry {
    int64_t row = 0;
    uint32_t slot = 0;   // a task has fewer than 2^32 distinct rows (a batch far below 2^32 ids)
    uint32_t stamp = 0;  // entries whose stamp is not stamp_ are empty
  };

  uint64_t hash(int64_t row) const {
    return (static_cast<uint64_t>(row) * 0x9E3779B97F4A7C15ULL) >> shift_;
  }

  // Empties the map (bumps the stamp) and uses the first `capacity` (a power of 2) entries.
  void set_capacity(int64_t capacity) {
    if (static_cast<int64_t>(entries_.size()) < capacity) entries_.resize(capacity);
    if (++stamp_ == 0) {  // wrapped: old stamps could match again
      for (Entry& e : entries_) e.stamp = 0;
      stamp_ = 1;
    }
    mask_ = static_cast<uint64_t>(capacity - 1);
    int bits = 0;
    while ((int64_t{1} << bits) < capacity) ++bits;
    shift_ = 64 - bits;
  }

  void grow() {
    set_capacity(2 * static_cast<int64_t>(mask_ + 1));
    for (size_t slot = 0; slot < rows_.size(); ++slot) {
      uint64_t h = hash(rows_[slot]);
      while (entries_[h].stamp == stamp_) h = (h + 1) & mask_;
      entries_[h] = Entry{rows_[slot], static_cast<uint32_t>(slot), stamp_};
    }
  }

  std::vector<Entry> entries_;
  std::vector<int64_t> rows_;
  uint64_t mask_ = 0;
  int shift_ = 64;
  uint32_t stamp_ = 0;
};

// Shard of `row` among `num_shards` (a hash, so that Zipf-hot rows spread over the shards).
inline int64_t shard_of(int64_t row, int64_t num_shards) {
  const uint64_t h = (static_cast<uint64_t>(row) * 0xC2B2AE3D27D4EB4FULL) >> 32;
  return static_cast<int64_t>((h * static_cast<uint64_t>(num_shards)) >> 32);
}

// acc[slot(row)] += a * src[0:D], a new slot starting from zero.
inline __attribute__((always_inline)) void accumulate(int64_t D, int64_t row, float a, const float* __restrict src,
                                                      RowSlotMap& map, std::vector<float>& acc) {
  bool inserted = false;
  const int64_t slot = map.find_or_insert(row, &inserted);
  if (inserted && static_cast<int64_t>(acc.size()) < (slot + 1) * D) {
    acc.resize(std::max<size_t>(2 * acc.size(), static_cast<size_t>((slot + 1) * D)));
  }
  float* __restrict g = acc.data() + slot * D;
  if (inserted) {
    for (int64_t d = 0; d < D; ++d) g[d] = 0.0f;
  }
  for (int64_t d = 0; d < D; ++d) g[d] += a * src[d];
}

// The factor of bag [begin, end)'s ids in its pooled output: 1 / L for mean pooling of a non-empty
// bag, else 1 (each id's weight comes on top).
inline float bag_scale(const FeatureBuffers& f, int64_t begin, int64_t end) {
  return f.mean && end > begin ? 1.0f / static_cast<float>(end - begin) : 1.0f;
}

constexpr int64_t kAheadBags = 4;  // scatter: bags (or occurrences) ahead whose gradient block is prefetched

// Adds the occurrences of feature f's ids into the slot accumulators acc [slots, D]:
// acc[slot(row)] += w_i * (mean ? 1 / L_b : 1) * grad_output[b, output_offset:+D], in bag order.
TZREC_SIMD_CLONES
void scatter_feature(int64_t D, const FeatureBuffers& f, int64_t batch_size,
                     const float* __restrict grad_output, int64_t output_stride, RowSlotMap& map,
                     std::vector<float>& acc) {
  for (int64_t b = 0; b < batch_size; ++b) {
    const int64_t begin = f.offsets[b], end = f.offsets[b + 1];
    if (begin == end) continue;
    if (b + kAheadBags < batch_size) {
      prefetch_row(grad_output + (b + kAheadBags) * output_stride + f.output_offset, D * 4, 0);
    }
    const float scale = bag_scale(f, begin, end);
    const float* src = grad_output + b * output_stride + f.output_offset;
    for (int64_t i = begin; i < end; ++i) {
      accumulate(D, f.ids[i], (f.per_id_weights ? f.per_id_weights[i] : 1.0f) * scale, src, map, acc);
    }
  }
}

// One occurrence of a row of a table split into shards: the row, its bag's pooled-gradient block
// and its factor w_i * (mean ? 1 / L_b : 1).
struct Occurrence {
  int64_t row;
  const float* src;
  float a;
};

// scatter_feature for the occurrences of one shard, in batch order.
TZREC_SIMD_CLONES
void scatter_occurrences(int64_t D, const Occurrence* occurrences, int64_t n, RowSlotMap& map,
                         std::vector<float>& acc) {
  for (int64_t k = 0; k < n; ++k) {
    if (k + kAheadBags < n) prefetch_row(occurrences[k + kAheadBags].src, D * 4, 0);
    accumulate(D, occurrences[k].row, occurrences[k].a, occurrences[k].src, map, acc);
  }
}

// The occurrences of table `table`'s ids grouped by shard (shard_of), each shard's in batch order
// (features, then bags, then ids): `shard_begin[s]` is the first of shard s (num_shards + 1
// entries). One pass over the ids to count and one to place them, in parallel over runs of bags —
// instead of every shard's task reading all of the table's ids and skipping the others' (a pass
// per shard, and the shards are 4 per thread).
void group_by_shard(const std::vector<FeatureBuffers>& features, int64_t table, int64_t num_shards,
                    int64_t batch_size, const float* grad_output, int64_t output_stride,
                    std::vector<Occurrence>* out, std::vector<int64_t>* shard_begin) {
  constexpr int64_t kRunBags = 512;
  struct Run {
    const FeatureBuffers* f;
    int64_t b_begin, b_end;
  };
  std::vector<Run> runs;
  for (const FeatureBuffers& f : features) {
    if (f.table != table) continue;
    for (int64_t b = 0; b < batch_size; b += kRunBags) runs.push_back(Run{&f, b, std::min(batch_size, b + kRunBags)});
  }
  const auto num_runs = static_cast<int64_t>(runs.size());
  // counts[r * num_shards + s], then each run's first position in shard s.
  std::vector<int64_t> at(static_cast<size_t>(num_runs * num_shards), 0);
  parallel_for(num_runs, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const FeatureBuffers& f = *runs[r].f;
      int64_t* counts = at.data() + r * num_shards;
      for (int64_t i = f.offsets[runs[r].b_begin]; i < f.offsets[runs[r].b_end]; ++i) {
        ++counts[shard_of(f.ids[i], num_shards)];
      }
    }
  });
  shard_begin->assign(static_cast<size_t>(num_shards + 1), 0);
  int64_t total = 0;
  for (int64_t s = 0; s < num_shards; ++s) {
    (*shard_begin)[s] = total;
    for (int64_t r = 0; r < num_runs; ++r) {
      const int64_t count = at[r * num_shards + s];
      at[r * num_shards + s] = total;
      total += count;
    }
  }
  (*shard_begin)[num_shards] = total;
  if (static_cast<int64_t>(out->size()) < total) out->resize(static_cast<size_t>(total));
  Occurrence* placed = out->data();
  parallel_for(num_runs, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const FeatureBuffers& f = *runs[r].f;
      int64_t* next = at.data() + r * num_shards;
      for (int64_t b = runs[r].b_begin; b < runs[r].b_end; ++b) {
        const int64_t ib = f.offsets[b], ie = f.offsets[b + 1];
        const float scale = bag_scale(f, ib, ie);
        const float* src = grad_output + b * output_stride + f.output_offset;
        for (int64_t i = ib; i < ie; ++i) {
          const int64_t row = f.ids[i];
          placed[next[shard_of(row, num_shards)]++] =
              Occurrence{row, src, (f.per_id_weights ? f.per_id_weights[i] : 1.0f) * scale};
        }
      }
    }
  });
}

TZREC_SIMD_CLONES
void half_to_float(int64_t D, const half_t* __restrict src, float* __restrict dst) {
  for (int64_t d = 0; d < D; ++d) dst[d] = static_cast<float>(src[d]);
}

TZREC_SIMD_CLONES
void float_to_half(int64_t D, const float* __restrict src, half_t* __restrict dst) {
  for (int64_t d = 0; d < D; ++d) dst[d] = static_cast<half_t>(src[d]);
}

int64_t state_stride(StateWidth width, int64_t dim) {
  return width == StateWidth::kFull ? dim : (width == StateWidth::kRow ? 1 : 0);
}

// Runs fn over [0, n) in chunks of `chunk` items, claimed dynamically from a shared counter by
// up to at::get_num_threads() threads of one parallel region of torch's intra-op pool (see
// parallel_for).
void run_chunks(int64_t n, int64_t chunk, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  chunk = std::max<int64_t>(chunk, 1);
  const int64_t threads = std::max<int64_t>(at::get_num_threads(), 1);
  const int64_t chunks = (n + chunk - 1) / chunk;
  if (chunks <= 1 || threads <= 1 || at::in_parallel_region()) {
    fn(0, n);
    return;
  }
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  // One task per thread (grain 1); a thread slowed down by other work on the machine claims fewer
  // chunks. An exception stops the claiming and is rethrown here, outside the parallel region.
  at::parallel_for(0, std::min(threads, chunks), 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      for (int64_t c = next++; c < chunks && !failed.load(std::memory_order_relaxed); c = next++) {
        try {
          fn(c * chunk, std::min(n, (c + 1) * chunk));
        } catch (...) {
          if (!failed.exchange(true)) error = std::current_exception();
        }
      }
    }
  });
  if (error) std::rethrow_exception(error);
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
      if (t.weight_type == WeightType::kFloat32) {
        pool_feature_f32(t.dim, static_cast<const float*>(t.weight), f, b_begin, b_end, output,
                         output_stride);
      } else {
        pool_feature_f16(t.dim, static_cast<const half_t*>(t.weight), f, b_begin, b_end, output,
                         output_stride);
      }
    }
  });
}

void backward_update(const std::vector<TableBuffers>& tables,
                     const std::vector<FeatureBuffers>& features, int64_t batch_size,
                     const float* grad_output, int64_t output_stride,
                     const OptimizerStateLayout& layout) {
  // Occurrences per trainable table.
  std::vector<int64_t> occurrences(tables.size(), 0);
  for (const FeatureBuffers& f : features) {
    if (tables[f.table].trainable) occurrences[f.table] += f.offsets[batch_size] - f.offsets[0];
  }
  int64_t total = 0;
  for (int64_t n : occurrences) total += n;
  if (total == 0) return;
  // Tasks: tables with many occurrences are split into shards so that there are about 4 tasks per
  // thread; the biggest tasks go first (dynamic claiming then balances the tail).
  struct Task {
    int64_t table, shard, num_shards, weight;
  };
  std::vector<Task> tasks;
  const int64_t threads = std::max<int64_t>(at::get_num_threads(), 1);
  // The occurrences of each table split into shards, grouped by shard (kept by the calling thread
  // across calls: no allocation in steady state; the tasks' threads read the caller's through these
  // references — the names of thread_local variables would give them their own).
  thread_local std::vector<std::vector<Occurrence>> caller_grouped;
  thread_local std::vector<std::vector<int64_t>> caller_grouped_begin;
  std::vector<std::vector<Occurrence>>& grouped = caller_grouped;
  std::vector<std::vector<int64_t>>& grouped_begin = caller_grouped_begin;
  if (grouped.size() < tables.size()) {
    grouped.resize(tables.size());
    grouped_begin.resize(tables.size());
  }
  for (size_t t = 0; t < tables.size(); ++t) {
    const int64_t n = occurrences[t];
    if (n == 0) continue;
    const int64_t shards =
        threads == 1 ? 1 : std::min<int64_t>(64, std::max<int64_t>(1, (n * 4 * threads + total - 1) / total));
    for (int64_t s = 0; s < shards; ++s) {
      tasks.push_back(Task{static_cast<int64_t>(t), s, shards, n / shards});
    }
    if (shards > 1) {
      group_by_shard(features, static_cast<int64_t>(t), shards, batch_size, grad_output, output_stride, &grouped[t],
                     &grouped_begin[t]);
    }
  }
  std::stable_sort(tasks.begin(), tasks.end(),
                   [](const Task& a, const Task& b) { return a.weight > b.weight; });
  run_chunks(static_cast<int64_t>(tasks.size()), 1, [&](int64_t begin, int64_t end) {
    // Scratch reused across tasks and calls on the same thread (no allocation in steady state).
    thread_local RowSlotMap map;
    thread_local std::vector<float> acc, w_buf;
    for (int64_t k = begin; k < end; ++k) {
      const Task& task = tasks[k];
      const TableBuffers& t = tables[task.table];
      const int64_t D = t.dim;
      map.start(occurrences[task.table] / task.num_shards);
      if (task.num_shards > 1) {
        const int64_t* begin_of = grouped_begin[task.table].data();
        scatter_occurrences(D, grouped[task.table].data() + begin_of[task.shard],
                            begin_of[task.shard + 1] - begin_of[task.shard], map, acc);
      } else {
        for (const FeatureBuffers& f : features) {
          if (f.table == task.table) scatter_feature(D, f, batch_size, grad_output, output_stride, map, acc);
        }
      }
      // Update the task's rows in slot order, prefetching the rows kPrefetchRows ahead.
      const int64_t* rows = map.rows().data();
      const int64_t num_slots = map.size();
      const int64_t wbytes = D * (t.weight_type == WeightType::kFloat32 ? 4 : 2);
      const int64_t s1 = state_stride(layout.momentum1, D), s2 = state_stride(layout.momentum2, D);
      if (static_cast<int64_t>(w_buf.size()) < D) w_buf.resize(D);
      for (int64_t slot = 0; slot < num_slots; ++slot) {
        if (slot + kPrefetchRows < num_slots) {
          const int64_t ahead = rows[slot + kPrefetchRows];
          prefetch_row(static_cast<const char*>(t.weight) + ahead * wbytes, wbytes, 1);
          if (t.momentum1) prefetch_row(t.momentum1 + ahead * s1, s1 * 4, 1);
          if (t.momentum2) prefetch_row(t.momentum2 + ahead * s2, s2 * 4, 1);
        }
        const int64_t row = rows[slot];
        float* g = acc.data() + slot * D;
        float* m1 = t.momentum1 ? t.momentum1 + row * s1 : nullptr;
        float* m2 = t.momentum2 ? t.momentum2 + row * s2 : nullptr;
        if (t.weight_type == WeightType::kFloat32) {
          apply_row_update(t.scalars, D, static_cast<float*>(t.weight) + row * D, g, m1, m2);
        } else {
          half_t* w = static_cast<half_t*>(t.weight) + row * D;
          half_to_float(D, w, w_buf.data());
          apply_row_update(t.scalars, D, w_buf.data(), g, m1, m2);
          float_to_half(D, w_buf.data(), w);
        }
      }
    }
  });
}

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t threads = std::max<int64_t>(at::get_num_threads(), 1);
  // A few chunks per thread balance uneven rows (Zipf-skewed ids make some runs long).
  run_chunks(n, std::max(grain, (n + 4 * threads - 1) / (4 * threads)), fn);
}

}  // namespace tzrec::embedding::tbe
