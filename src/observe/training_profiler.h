// train_config.is_profiling: a profile of a bounded window of training steps, written as a Chrome
// trace (chrome://tracing, Perfetto, TensorBoard's profiler plugin) under
// model_dir/train_eval_trace/, as TorchEasyRec's torch.profiler.profile does.
//
// Schedule (TorchEasyRec: torch.profiler.schedule(wait=1, warmup=1, active=10, repeat=1)): steps
// are counted by step() calls from 0, the profiler's own count, not the global step (a resumed
// run profiles its first steps too). Step 0 is skipped (wait), step 1 prepares the profiler
// (warmup, not recorded), steps 2..11 are recorded, each inside a "ProfilerStep#<n>" user scope
// around everything between two step() calls (the step and any checkpoint save / evaluation after
// it, hence "train_eval"). The trace is written when the window ends, or by stop() / the
// destructor when training ends inside it (a run that ends before step 2 writes nothing, like
// torch). Only one window per run (repeat=1).
//
// Recording uses libtorch's profiler (torch/csrc/autograd/profiler_kineto.h) with input shapes and
// memory events, as TorchEasyRec asks (record_shapes, profile_memory). Its own trace export needs
// libtorch built with Kineto, which Debian's libtorch is not, so the trace is written here from the
// recorded events instead, in Kineto's JSON layout: {"schemaVersion": 1, "traceEvents": [...]}
// with complete events ("ph": "X", ts / dur in microseconds from the trace start) for operators
// and user scopes, and instant events ("ph": "i") for memory allocations ("[memory]", args.Bytes).
// File name as torch.profiler.tensorboard_trace_handler names it:
//   <hostname>_<pid>.<unix time in ns>.pt.trace.json
//
// The profiler is thread-local, like torch.profiler's default: it records the operators run by the
// thread that calls step() (and the autograd work it starts). Construct it, call step() and
// destroy it on the training thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace at {
struct RecordFunction;
}

namespace tzrec::observe {

// Subdirectory of model_dir that receives the traces (TorchEasyRec's name).
inline constexpr const char* kTrainEvalTraceDir = "train_eval_trace";

struct ProfilerSchedule {
  int64_t wait = 1;     // steps skipped first
  int64_t warmup = 1;   // steps run with the profiler prepared but not recording
  int64_t active = 10;  // steps recorded (> 0)
};

class TrainingProfiler {
 public:
  // Disabled: every call is a no-op. Enabled: creates `trace_dir` (with parents; IoError naming it
  // when that fails) and starts counting steps.
  TrainingProfiler(bool enabled, std::string trace_dir, ProfilerSchedule schedule = {});
  ~TrainingProfiler();  // stop(); errors are logged, not thrown
  TrainingProfiler(const TrainingProfiler&) = delete;
  TrainingProfiler& operator=(const TrainingProfiler&) = delete;

  // Call after every training step (torch.profiler.profile.step()). Writes the trace when this
  // ends the recorded window; IoError naming the file when it cannot be written.
  void step();
  // Ends profiling (training finished); writes the trace when inside the recorded window.
  // Idempotent; later step() calls do nothing.
  void stop();

  bool enabled() const { return enabled_; }
  bool recording() const { return action_ == Action::kRecord; }
  // Path of the written trace; empty until one is written.
  const std::string& trace_path() const { return trace_path_; }

 private:
  enum class Action { kNone, kWarmup, kRecord };
  Action action_for(int64_t step_num) const;
  void transit(Action from, Action to);
  void open_step_scope();
  void close_step_scope();
  void finish_and_write();

  bool enabled_;
  std::string trace_dir_;
  ProfilerSchedule schedule_;
  int64_t step_num_ = 0;
  Action action_ = Action::kNone;
  bool stopped_ = false;
  bool profiler_on_ = false;  // libtorch profiler enabled on this thread by us
  std::unique_ptr<at::RecordFunction> step_scope_;  // "ProfilerStep#<n>" while recording
  std::string trace_path_;
};

}  // namespace tzrec::observe
