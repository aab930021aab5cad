// Raw CPU kernels of table-batched embedding bags (TBE): the pooled forward over all features of a
// group of tables, and the backward that aggregates the gradient of every distinct row touched by
// the batch and applies the sparse optimizer to that row in place (FBGEMM's fused backward).
// No per-id or dense weight gradient is ever materialised.
//
// Inputs are plain buffers; callers (FusedEmbeddingBags) validate them first: every id of a
// feature in [0, num_rows) of its table (find_out_of_range_id), offsets [B + 1] non-decreasing from
// 0. Work is split over torch's intra-op thread count: the forward over bags, the backward over
// tasks of one table each (tables with a large share of the batch's ids are split into shards of
// rows by a hash of the row), so no two threads ever update the same row. Results do not depend on
// the number of threads: each row's gradient is summed in one fixed order (features, then bags,
// then ids).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "embedding/fused_row_optimizer.h"

namespace tzrec::embedding::tbe {

enum class WeightType { kFloat32, kFloat16 /* IEEE binary16 storage, float32 math */ };

// One table of a group.
struct TableBuffers {
  void* weight = nullptr;  // [num_rows, dim] row-major, float or binary16 (WeightType)
  WeightType weight_type = WeightType::kFloat32;
  int64_t num_rows = 0;
  int64_t dim = 0;
  bool trainable = true;   // frozen tables are never written
  float* momentum1 = nullptr;  // optimizer state per OptimizerStateLayout: [num_rows, dim],
  float* momentum2 = nullptr;  // [num_rows] or nullptr
  RowUpdateScalars scalars;    // this step's optimizer scalars (backward only)
};

// One feature (pooled lookup) of a group.
struct FeatureBuffers {
  const int64_t* ids = nullptr;             // [num_ids] rows of `table`
  const int64_t* offsets = nullptr;         // [B + 1]; bag b is ids[offsets[b], offsets[b + 1])
  const float* per_id_weights = nullptr;    // [num_ids] or nullptr (all 1)
  int64_t table = 0;                        // index into the group's tables
  bool mean = false;                        // mean pooling: sum(w_i * e_i) / L (0 for L = 0)
  int64_t output_offset = 0;                // first column of this feature in the pooled output
};

// Index of the first id outside [0, num_rows), or -1.
int64_t find_out_of_range_id(const int64_t* ids, int64_t num_ids, int64_t num_rows);

// output: [batch_size, output_stride] float32; writes columns [output_offset, output_offset + dim)
// of every feature (the caller zero-fills nothing: every written block is overwritten).
void pooled_forward(const std::vector<TableBuffers>& tables,
                    const std::vector<FeatureBuffers>& features, int64_t batch_size, float* output,
                    int64_t output_stride);

// grad_output: [batch_size, output_stride] float32, the gradient of the pooled output (already
// clipped if the optimizer clips). For every trainable table, every distinct row r touched by the
// batch gets g_r = sum over its occurrences i (in bag b of feature f) of
//   w_i * (mean ? 1 / L_b : 1) * grad_output[b, output_offset_f : output_offset_f + dim]
// and then apply_row_update(table.scalars, ...) on its weights and state. Rows are never touched
// twice and untouched rows are never read.
void backward_update(const std::vector<TableBuffers>& tables,
                     const std::vector<FeatureBuffers>& features, int64_t batch_size,
                     const float* grad_output, int64_t output_stride,
                     const OptimizerStateLayout& layout);

// Runs fn(begin, end) over disjoint ranges covering [0, n) (chunks of at least `grain` items) on
// up to at::get_num_threads() threads of torch's intra-op (OpenMP) pool, the one torch's own ops
// use: a second pool would leave its threads and the OpenMP threads, which spin a while after each
// parallel region, competing for the same cores. Exceptions from fn are rethrown in the caller.
// Runs inline when n <= grain, a single thread is configured or inside a parallel region.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace tzrec::embedding::tbe
