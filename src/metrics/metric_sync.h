// Exchanges of metric state between the ranks of a process group, for the metrics' sync().
//
// Contract shared by every metric's sync(pg): it replaces the rank's state by the state of all
// ranks merged (as merge() would, in rank order), so that compute() afterwards returns on every rank
// the value one process would compute over every rank's samples. Every rank must call it, in the
// same order for the same metrics (it is a collective). Call it once per evaluation, after the last
// update() and before compute(): a second sync() before reset() is a no-op, and update() or merge()
// after sync() (before reset()) is refused, since a later sync() would count the other ranks'
// samples twice. On a world of size 1 the state is unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "dist/process_group.h"

namespace tzrec::metrics::detail {

// Sums `values` over all ranks in place: one all_reduce of float64 (int64 for the overload).
void sum_across_ranks(dist::ProcessGroup& pg, std::vector<double>& values, const std::string& what);
void sum_across_ranks(dist::ProcessGroup& pg, std::vector<int64_t>& values, const std::string& what);

// Every rank's `rows` ([n, C], n may be 0 and differ between ranks; same dtype and C everywhere)
// preceded by its `header` ([1, C], e.g. flags describing the rows), in rank order: one all_gather.
// Element r of the result is rank r's [1 + n_r, C] block, header first.
std::vector<torch::Tensor> gather_blocks(dist::ProcessGroup& pg, const torch::Tensor& header,
                                         const torch::Tensor& rows, const std::string& what);

// Per-sample state of the grouped metrics: group id, float32 prediction and one int64 per sample
// (a label, or the bits of a float64 target).
struct GroupedSamples {
  std::vector<int64_t> groups;
  std::vector<float> preds;
  std::vector<int64_t> payload;
};

// Replaces `samples` by every rank's samples, in rank order (one all_gather of int64 rows; group
// ids beyond 2^53 and every prediction bit travel exactly).
void gather_grouped_samples(dist::ProcessGroup& pg, GroupedSamples& samples, const std::string& what);

}  // namespace tzrec::metrics::detail
