// One side of bench/dynamic_probe_ab.sh: a DynamicTable (docs/tzrec-compatibility.md §5.13) of one
// source revision, compiled into a namespace of its own (-Dembedding=<name>) with entry points
// named after its side (-DTZREC_PROBE_SIDE=A or B), so that two revisions of the table live in one
// process and take turns on the same machine state.
//
// setup_<side>(live, threads, seed): a table of max_capacity = live (STEP scores, buckets of 128),
// filled as bench/dynamic_embedding_bench.cc fills it (training calls of 2^20 never-seen ids until
// every row is live, at most 400 calls), then 8 batches of 106 496 live ids (4096 × 26) uniform
// over the live keys and 8 Zipf-like (exponent 1.05, the bounded continuous Pareto inverse over the
// keys in a shuffled order), both drawn by bench/rank_sampler.h. probe_<side>(kind, dist, batch):
// the milliseconds of one find() (kind 0) or training find_or_insert() (kind 1, the next step) of
// a batch (dist 0 uniform, 1 Zipf). batch_<side>(dist, batch): that batch's ids (kBatchIds of them).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "embedding/dynamic_table.h"
#include "rank_sampler.h"

#define TZREC_PROBE_CAT2(a, b) a##b
#define TZREC_PROBE_CAT(a, b) TZREC_PROBE_CAT2(a, b)

namespace {

using tzrec::embedding::DynamicTable;
using tzrec::embedding::DynamicTableLookup;
using tzrec::embedding::DynamicTableOptions;

constexpr size_t kBatchIds = 4096 * 26;
constexpr int kBatches = 8;

struct Side {
  std::unique_ptr<DynamicTable> table;
  std::vector<std::vector<int64_t>> batches[2];  // [dist][batch]
  std::vector<int64_t> rows;
  int64_t step = 1;
};
Side side;

}  // namespace

void TZREC_PROBE_CAT(setup_, TZREC_PROBE_SIDE)(int64_t live, int threads, uint64_t seed) {
  DynamicTableOptions options;
  options.max_capacity = live;
  options.bucket_capacity = 128;
  side.table = std::make_unique<DynamicTable>(options);
  side.table->set_probe_threads(threads);
  std::mt19937_64 rng(seed);
  std::vector<int64_t> fresh(size_t{1} << 20);
  for (int call = 0; call < 400 && side.table->size() < side.table->max_capacity(); ++call) {
    for (int64_t& id : fresh) id = static_cast<int64_t>(rng() >> 1);
    DynamicTableLookup out;
    side.table->find_or_insert(fresh.data(), fresh.size(), side.step++, 0, out);
  }
  std::vector<int64_t> keys = side.table->export_state().keys;
  std::shuffle(keys.begin(), keys.end(), rng);
  const auto n = static_cast<int64_t>(keys.size());
  const tzrec::bench::RankSampler samplers[2] = {tzrec::bench::RankSampler(n, 0.0),
                                                 tzrec::bench::RankSampler(n, 1.05)};
  for (int dist = 0; dist < 2; ++dist) {
    side.batches[dist].assign(kBatches, std::vector<int64_t>(kBatchIds));
    for (auto& batch : side.batches[dist]) {
      for (int64_t& id : batch) id = keys[static_cast<size_t>(samplers[dist](rng))];
    }
  }
  side.rows.resize(kBatchIds);
}

double TZREC_PROBE_CAT(probe_, TZREC_PROBE_SIDE)(int kind, int dist, int batch) {
  const std::vector<int64_t>& ids = side.batches[dist][batch % kBatches];
  const auto start = std::chrono::steady_clock::now();
  if (kind == 0) {
    side.table->find(ids.data(), ids.size(), side.rows.data());
  } else {
    DynamicTableLookup out;
    side.table->find_or_insert(ids.data(), ids.size(), side.step++, 0, out);
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

const int64_t* TZREC_PROBE_CAT(batch_, TZREC_PROBE_SIDE)(int dist, int batch) {
  return side.batches[dist][batch % kBatches].data();
}
