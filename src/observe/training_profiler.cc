#include "observe/training_profiler.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <system_error>
#include <utility>

#include <ATen/record_function.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/version.h>

#include "base/error.h"
#include "base/logging.h"
#include "base/text.h"

namespace tzrec::observe {
namespace {

namespace fs = std::filesystem;
namespace tp = torch::autograd::profiler;

// libtorch 2.1 moved the profiler's timestamps from microseconds to nanoseconds.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
double start_us(const tp::KinetoEvent& e) { return static_cast<double>(e.startNs()) / 1000.0; }
double duration_us(const tp::KinetoEvent& e) { return static_cast<double>(e.durationNs()) / 1000.0; }
int64_t trace_start_ns(const tp::ProfilerResult& r) { return static_cast<int64_t>(r.trace_start_ns()); }
#else
double start_us(const tp::KinetoEvent& e) { return static_cast<double>(e.startUs()); }
double duration_us(const tp::KinetoEvent& e) { return static_cast<double>(e.durationUs()); }
int64_t trace_start_ns(const tp::ProfilerResult& r) { return static_cast<int64_t>(r.trace_start_us()) * 1000; }
#endif

const tp::ProfilerConfig& profiler_config() {
  // TorchEasyRec: record_shapes=True, profile_memory=True (with_stack only adds Python frames).
  static const tp::ProfilerConfig config(tp::ProfilerState::KINETO, /*report_input_shapes=*/true,
                                         /*profile_memory=*/true);
  return config;
}

const std::set<tp::ActivityType>& profiler_activities() {
  static const std::set<tp::ActivityType> activities = {tp::ActivityType::CPU};
  return activities;
}

// One Kineto-style trace event per profiler event.
nlohmann::json trace_event(const tp::KinetoEvent& e, double base_us, int64_t pid) {
  nlohmann::json out;
  out["name"] = e.name();
  out["pid"] = pid;
  out["tid"] = e.startThreadId();
  out["ts"] = start_us(e) - base_us;
  nlohmann::json args = nlohmann::json::object();
  if (e.name() == "[memory]") {
    // Allocation (> 0) or release (< 0) of nBytes on a device.
    out["ph"] = "i";
    out["s"] = "t";
    out["cat"] = "cpu_instant_event";
    args["Bytes"] = e.nBytes();
    args["Device Type"] = static_cast<int>(e.deviceType());
    args["Device Id"] = static_cast<int>(static_cast<int8_t>(e.deviceIndex()));  // CPU: -1
  } else {
    out["ph"] = "X";
    out["dur"] = duration_us(e);
    if (e.deviceType() != c10::DeviceType::CPU) {
      out["cat"] = "kernel";  // device activity (a libtorch built with Kineto reports these)
      out["pid"] = fmt::format("{} {}", c10::DeviceTypeName(e.deviceType()), static_cast<int>(e.deviceIndex()));
    } else {
      out["cat"] = e.scope() == static_cast<uint8_t>(at::RecordScope::USER_SCOPE) ? "user_annotation" : "cpu_op";
    }
    args["External id"] = e.correlationId();
    if (e.sequenceNr() >= 0) args["Sequence number"] = e.sequenceNr();
    if (e.fwdThreadId() > 0) args["Fwd thread id"] = e.fwdThreadId();
    if (e.hasShapes()) {
      nlohmann::json dims = nlohmann::json::array();
      for (const auto& shape : e.shapes()) dims.push_back(shape);
      args["Input Dims"] = std::move(dims);
    }
    if (e.hasTypes()) {
      nlohmann::json types = nlohmann::json::array();
      for (const auto& type : e.dtypes()) types.push_back(type);
      args["Input type"] = std::move(types);
    }
  }
  out["args"] = std::move(args);
  return out;
}

void write_chrome_trace(const tp::ProfilerResult& result, const std::string& path) {
  const int64_t pid = getpid();
  const int64_t base_ns = trace_start_ns(result);
  const double base_us = static_cast<double>(base_ns) / 1000.0;
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0},
                    {"args", {{"name", fmt::format("tzrec {}", pid)}}}});
  for (const auto& e : result.events()) events.push_back(trace_event(e, base_us, pid));
  nlohmann::json trace;
  trace["schemaVersion"] = 1;
  trace["displayTimeUnit"] = "ms";
  trace["baseTimeNanoseconds"] = base_ns;
  trace["traceEvents"] = std::move(events);

  // Written next to its final name and renamed, so that a reader never sees half a trace.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw IoError(fmt::format("cannot create profiler trace file {}", tmp));
    out << trace.dump() << '\n';
    out.close();
    if (!out) throw IoError(fmt::format("cannot write profiler trace file {} (disk full?)", tmp));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw IoError(fmt::format("cannot rename {} to {}: {}", tmp, path, ec.message()));
}

}  // namespace

TrainingProfiler::TrainingProfiler(bool enabled, std::string trace_dir, ProfilerSchedule schedule)
    : enabled_(enabled), trace_dir_(std::move(trace_dir)), schedule_(schedule) {
  if (!enabled_) return;
  TORCH_CHECK(schedule_.wait >= 0 && schedule_.warmup >= 0 && schedule_.active > 0,
              "ProfilerSchedule needs wait >= 0, warmup >= 0, active > 0");
  std::error_code ec;
  fs::create_directories(trace_dir_, ec);
  if (ec) {
    throw IoError(fmt::format("train_config.is_profiling: cannot create the trace directory {}: {}",
                              trace_dir_, ec.message()));
  }
  action_ = action_for(0);
  transit(Action::kNone, action_);
  open_step_scope();
}

TrainingProfiler::~TrainingProfiler() {
  try {
    stop();
  } catch (const std::exception& e) {
    log::error("profiler trace not written: {}", e.what());
  }
}

TrainingProfiler::Action TrainingProfiler::action_for(int64_t step_num) const {
  if (step_num < schedule_.wait) return Action::kNone;
  if (step_num < schedule_.wait + schedule_.warmup) return Action::kWarmup;
  if (step_num < schedule_.wait + schedule_.warmup + schedule_.active) return Action::kRecord;
  return Action::kNone;  // repeat=1: one window per run
}

void TrainingProfiler::transit(Action from, Action to) {
  if (from == to) return;
  if (to == Action::kWarmup || (to == Action::kRecord && from == Action::kNone)) {
    tp::prepareProfiler(profiler_config(), profiler_activities());
  }
  if (to == Action::kRecord) {
    tp::enableProfiler(profiler_config(), profiler_activities());
    profiler_on_ = true;
    log::info("profiling steps {}..{} (counted from this run's first step) into {}", step_num_,
              schedule_.wait + schedule_.warmup + schedule_.active - 1, trace_dir_);
  }
  if (from == Action::kRecord) finish_and_write();
}

void TrainingProfiler::open_step_scope() {
  if (action_ != Action::kRecord) return;
  step_scope_ = std::make_unique<at::RecordFunction>(at::RecordScope::USER_SCOPE);
  if (step_scope_->isActive()) step_scope_->before("ProfilerStep#" + std::to_string(step_num_));
}

void TrainingProfiler::close_step_scope() {
  step_scope_.reset();  // the destructor runs the scope's end callbacks
}

void TrainingProfiler::step() {
  if (!enabled_ || stopped_) return;
  close_step_scope();
  const Action prev = action_;
  ++step_num_;
  action_ = action_for(step_num_);
  transit(prev, action_);
  open_step_scope();
}

void TrainingProfiler::stop() {
  if (!enabled_ || stopped_) return;
  stopped_ = true;
  close_step_scope();
  const Action prev = action_;
  action_ = Action::kNone;
  if (prev == Action::kRecord) finish_and_write();
  if (prev == Action::kWarmup) {
    // Prepared but never recorded: start and stop once so that the profiler releases what
    // prepareProfiler set up (torch does the same); no trace.
    tp::enableProfiler(profiler_config(), profiler_activities());
    tp::disableProfiler();
  }
}

void TrainingProfiler::finish_and_write() {
  if (!profiler_on_) return;
  profiler_on_ = false;
  const auto result = tp::disableProfiler();
  const auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const std::string path = (fs::path(trace_dir_) / fmt::format("{}_{}.{}.pt.trace.json", host_name(),
                                                                getpid(), now_ns))
                               .string();
  write_chrome_trace(*result, path);
  trace_path_ = path;
  log::info("profiler trace written to {} ({} events)", path, result->events().size());
}

}  // namespace tzrec::observe
