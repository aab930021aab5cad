// ZchModule: zero-collision hashing of one embedding table — TorchRec's MCHManagedCollisionModule
// (torchrec/modules/mc_modules.py) as TorchEasyRec builds it from a feature's ZeroCollisionHash
// (zch_size, eviction_interval, lfu / lru / distance_lfu, threshold_filtering_func; no input hash
// function, input_hash_size 2^63 - 1). docs/tzrec-compatibility.md §5.12.
//
// State: a buffer of S = zch_size raw ids kept sorted ascending (empty places hold INT64_MAX), the
// slot (embedding row) of each entry, and the policy's per-entry metadata. Initially every entry
// is empty and entry i owns slot offset + i. The last entry is a sentinel that is never evicted:
// its slot, offset + S - 1, is the row of every id not in the buffer, so at most S - 1 ids hold
// rows of their own.
//
// remap(values [N] int64) → slots [N] int64: the slot of each id found in the buffer,
//   offset + S - 1 for every other id. Pure; used in training and evaluation alike.
// profile(values) (training only): one step. Counts the step (current_iter, starting at 1), appends
//   the ids to a history buffer, and every eviction_interval steps coalesces the history: distinct
//   ids with their counts (and last step seen), the threshold filter, then the eviction policy
//   (zch_eviction_policy.h) decides which entries are evicted and which new ids take their places;
//   each new id takes over the evicted entry's slot, and the buffer is re-sorted.
// forward(values, training) = profile (when training), then remap: ids admitted at this step's
//   eviction already map to their new slots.
// evict(): the slots whose entries were replaced since the last call (embedding rows and optimizer
//   state the caller must reset), or nullopt when no eviction ran since. After an eviction the
//   result is a tensor even if it is empty.
//
// The history buffer holds int(N_first * eviction_interval * 1.25) ids, N_first the size of the
// first profiled batch (or reserve_history's); ids beyond it in an interval are dropped (as
// TorchRec).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "embedding/touched_ids.h"
#include "embedding/zch_eviction_policy.h"
#include "embedding/zch_threshold_filter.h"

namespace tzrec::embedding {

// The raw id of an empty place (and of the sentinel).
inline constexpr int64_t kZchEmptyId = std::numeric_limits<int64_t>::max();

struct ZchOptions {
  int64_t zch_size = 0;           // S, > 0
  int64_t eviction_interval = 5;  // steps between evictions, > 0 (ZeroCollisionHash's default)
  ZchEvictionKind eviction = ZchEvictionKind::kLfu;
  double decay_exponent = 1.0;           // lru, distance_lfu
  std::string threshold_filtering_func;  // empty: every id is a candidate
  // Row-wise sharding: this module owns output slots [offset, offset + S), and output_segments
  // (empty: {offset, offset + S}) lists the boundaries of all shards of the table.
  int64_t output_global_offset = 0;
  std::vector<int64_t> output_segments;
  int64_t input_hash_size = std::numeric_limits<int64_t>::max();  // informational (input_size())
  torch::Device device = torch::kCPU;
  // Prefix of the ConfigErrors (the config path of the ZeroCollisionHash message).
  std::string field_path = "zch";
  // Random stream of probabilistic_threshold_filter; torch's default generator when absent.
  std::optional<at::Generator> generator;
};

class ZchModule {
 public:
  // Throws ConfigError for zch_size <= 0, eviction_interval <= 0, more than 1025 output segments,
  // or a threshold_filtering_func outside the accepted forms (zch_threshold_filter.h).
  explicit ZchModule(ZchOptions options);

  torch::Tensor remap(const torch::Tensor& values) const;
  void profile(const torch::Tensor& values);
  torch::Tensor forward(const torch::Tensor& values, bool training);
  // Sizes the history from `first_batch_size` ids instead of the first profiled batch (no effect
  // once it is sized). Row-wise sharded tables pass the ids of the first batch of all ranks
  // together (zch_embedding_bag_collection.h).
  void reserve_history(int64_t first_batch_size);
  std::optional<torch::Tensor> evict();
  // Delta embedding dumps: from now on forward() in training records the ids it is given, and
  // every eviction the ids it admits and evicts (touched_ids.h).
  void track_touched_ids();
  // The ids recorded since the previous call, [K] int64 ascending. TORCH_CHECK: tracking is on.
  torch::Tensor take_touched_ids();

  // Empty entries left (the sentinel not counted).
  int64_t open_slots() const;
  int64_t output_size() const { return options_.zch_size; }
  int64_t input_size() const { return options_.input_hash_size; }
  int64_t current_iter() const;
  const ZchOptions& options() const { return options_; }
  // The output segments the module was built with, as _output_segments_tensor holds them.
  const torch::Tensor& initial_output_segments() const { return init_output_segments_; }
  const ZchEvictionPolicy& policy() const { return *policy_; }

  // The persistent buffers under TorchRec's state-dict names, in its order:
  //   _output_segments_tensor [1025] int64 (the segments, padded with -1)
  //   _current_iter_tensor    [1] int64   (steps profiled)
  //   _mch_sorted_raw_ids     [S] int64
  //   _mch_remapped_ids_mapping [S] int64 (slot of each entry)
  //   _mch_counts             [S] int64   (lfu, distance_lfu)
  //   _mch_last_access_iter   [S] int64   (lru, distance_lfu)
  // The tensors are the module's own storage: writing into them changes the module.
  std::vector<std::pair<std::string, torch::Tensor>> state() const;
  // Copies every tensor of state() from `tensors` (CheckpointError naming `where` on a missing
  // name or a shape mismatch, or segments that do not contain this module's range), re-sorts the
  // buffer, clears the history, and takes the step count from _current_iter_tensor.
  void load_state(const std::map<std::string, torch::Tensor>& tensors, const std::string& where);

 private:
  void init_history(int64_t first_batch_size);
  void coalesce_history();
  void update_and_evict(const torch::Tensor& ids, const torch::Tensor& counts,
                        const torch::Tensor& last_access_iter);
  void sort_buffers();

  ZchOptions options_;
  std::unique_ptr<ZchEvictionPolicy> policy_;

  torch::Tensor init_output_segments_;  // [1025] int64
  torch::Tensor output_segments_;       // [1025] int64
  torch::Tensor current_iter_tensor_;   // [1] int64
  torch::Tensor sorted_raw_ids_;        // [S] int64
  torch::Tensor remapped_ids_mapping_;  // [S] int64
  ZchSlotMetadata metadata_;            // [S] int64 each, as the policy uses

  int64_t current_iter_ = -1;  // -1: not read from current_iter_tensor_ yet
  int64_t last_eviction_iter_ = -1;
  int64_t history_capacity_ = -1;  // -1: not allocated yet
  int64_t history_size_ = 0;
  torch::Tensor history_ids_;               // [capacity] int64
  torch::Tensor history_last_access_iter_;  // [capacity] int64 (lru, distance_lfu)

  bool evicted_ = false;
  torch::Tensor evicted_slots_;
  std::shared_ptr<TouchedIds> touched_;  // set by track_touched_ids()
};

}  // namespace tzrec::embedding
