// When delta embedding dumps happen (train/delta_embedding_dump.h; TorchEasyRec's
// DeltaEmbeddingDumper: _local_dump_decision, maybe_dump's rescheduling and final_dump's skips).
//   - dump_interval_steps N: after every step that is > 0 and a multiple of N;
//   - dump_interval_minutes M: deadlines start + k · M from start(); after a step that ends at or
//     past the next deadline, then the deadline moves to the first one after now (those a long
//     step passed are skipped, not caught up);
//   - at the end of training: unless the last step is 0, a multiple of N, or the step of the
//     latest timed dump.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

#include "tzrec/protos/train.pb.h"

namespace tzrec::train {

class DeltaDumpSchedule {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  // The config must have passed validation (one interval, > 0).
  explicit DeltaDumpSchedule(const protos::DeltaEmbeddingDumpConfig& config,
                             Clock clock = [] { return std::chrono::steady_clock::now(); });

  // Training starts (the deadlines' origin).
  void start();
  // Whether to dump after training step `step`; if so, the dump counts as done.
  bool due_after(int64_t step);
  // Whether to dump at the end of training, `step` being the last trained step; if so, the dump
  // counts as done.
  bool final_due(int64_t step);

 private:
  Clock clock_;
  std::optional<int64_t> steps_;
  std::chrono::steady_clock::duration interval_{};
  std::optional<std::chrono::steady_clock::time_point> next_;
  std::optional<int64_t> last_dump_step_;
};

}  // namespace tzrec::train
