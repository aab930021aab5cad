#include "observe/training_profiler.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "base/error.h"
#include "data/testing_util.h"

namespace tzrec::observe {
namespace training_profiler_test {

namespace fs = std::filesystem;

using data::testing::TempDir;

// A tiny training step: forward, backward, SGD update of w: [8, 4].
void tiny_step(torch::Tensor& w) {
  auto x = torch::ones({16, 8});
  auto loss = torch::mm(x, w).relu().sum();
  loss.backward();
  torch::NoGradGuard no_grad;
  w.sub_(w.grad() * 0.01);
  w.mutable_grad().zero_();
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& entry : fs::directory_iterator(dir)) out.push_back(entry.path());
  return out;
}

nlohmann::json parse_file(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);  // throws on invalid JSON
}

// Names of the "ProfilerStep#<n>" events, in order.
std::vector<std::string> step_scopes(const nlohmann::json& trace) {
  std::vector<std::string> out;
  for (const auto& e : trace.at("traceEvents")) {
    const std::string name = e.at("name");
    if (name.rfind("ProfilerStep#", 0) == 0) out.push_back(name);
  }
  return out;
}

TEST(TrainingProfiler, RecordsTheActiveWindowAsChromeTrace) {
  TempDir dir;
  const fs::path trace_dir = fs::path(dir.path()) / "model_dir" / kTrainEvalTraceDir;
  auto w = torch::full({8, 4}, 0.1).set_requires_grad(true);
  TrainingProfiler profiler(true, trace_dir.string(), ProfilerSchedule{/*wait=*/1, /*warmup=*/1, /*active=*/3});
  EXPECT_TRUE(fs::is_directory(trace_dir));  // created up front
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(profiler.recording(), i >= 2 && i <= 4) << i;
    tiny_step(w);
    EXPECT_TRUE(profiler.trace_path().empty()) << i;
    profiler.step();
  }
  // The 5th step() closed the window (steps 2, 3, 4) and wrote the trace.
  ASSERT_FALSE(profiler.trace_path().empty());
  EXPECT_FALSE(profiler.recording());
  for (int i = 0; i < 3; ++i) {  // one window per run: later steps are not recorded
    tiny_step(w);
    profiler.step();
  }
  profiler.stop();

  const auto files = files_in(trace_dir);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].string(), profiler.trace_path());
  // torch.profiler.tensorboard_trace_handler's name: <hostname>_<pid>.<time_ns>.pt.trace.json
  char host[256] = {0};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  const std::string name = files[0].filename().string();
  const std::string prefix = fmt::format("{}_{}.", host, getpid());
  const std::string suffix = ".pt.trace.json";
  ASSERT_GT(name.size(), prefix.size() + suffix.size()) << name;
  EXPECT_EQ(name.substr(0, prefix.size()), prefix);
  EXPECT_EQ(name.substr(name.size() - suffix.size()), suffix);
  const std::string ns = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  EXPECT_EQ(ns.find_first_not_of("0123456789"), std::string::npos) << name;
  EXPECT_GE(ns.size(), 19u) << name;  // nanoseconds since 1970: 19 digits

  const nlohmann::json trace = parse_file(files[0]);
  EXPECT_EQ(trace.at("schemaVersion"), 1);
  ASSERT_TRUE(trace.at("traceEvents").is_array());
  EXPECT_EQ(step_scopes(trace), (std::vector<std::string>{"ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"}));

  // Step windows [ts, ts + dur] by name, and the operators inside them.
  std::map<std::string, std::pair<double, double>> windows;
  int mm = 0, memory = 0, backward = 0;
  for (const auto& e : trace.at("traceEvents")) {
    const std::string n = e.at("name");
    const std::string ph = e.at("ph");
    if (ph == "M") continue;
    EXPECT_GE(e.at("ts").get<double>(), 0.0) << n;
    EXPECT_EQ(e.at("pid"), getpid()) << n;
    if (n.rfind("ProfilerStep#", 0) == 0) {
      EXPECT_EQ(ph, "X");
      EXPECT_EQ(e.at("cat"), "user_annotation");
      windows[n] = {e.at("ts").get<double>(), e.at("ts").get<double>() + e.at("dur").get<double>()};
    }
    if (n == "aten::mm" && ph == "X") {
      ++mm;
      EXPECT_EQ(e.at("cat"), "cpu_op");
      EXPECT_GE(e.at("dur").get<double>(), 0.0);
    }
    if (n == "[memory]") {
      ++memory;
      EXPECT_EQ(ph, "i");
      EXPECT_TRUE(e.at("args").at("Bytes").is_number_integer());
    }
    if (n.find("MmBackward0") != std::string::npos) ++backward;
  }
  // 3 recorded steps: one forward mm each, and mm inside every MmBackward0.
  EXPECT_GE(mm, 3);
  EXPECT_GE(backward, 3);
  EXPECT_GT(memory, 0);
  // The forward mm [16, 8] x [8, 4] of each recorded step lies inside its step window.
  int forward_mm_inside = 0;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("name") != "aten::mm" || !e.at("args").contains("Input Dims")) continue;
    if (e.at("args").at("Input Dims") != nlohmann::json::parse("[[16, 8], [8, 4]]")) continue;
    const double ts = e.at("ts");
    for (const auto& [step, window] : windows) {
      if (ts >= window.first && ts + e.at("dur").get<double>() <= window.second) ++forward_mm_inside;
    }
  }
  EXPECT_EQ(forward_mm_inside, 3);
}

TEST(TrainingProfiler, StopInsideTheWindowWritesWhatWasRecorded) {
  TempDir dir;
  auto w = torch::full({8, 4}, 0.1).set_requires_grad(true);
  std::string path;
  {
    TrainingProfiler profiler(true, dir.path(), ProfilerSchedule{0, 0, 10});
    for (int i = 0; i < 2; ++i) {
      tiny_step(w);
      profiler.step();
    }
    EXPECT_TRUE(profiler.recording());
    EXPECT_TRUE(files_in(dir.path()).empty());
  }  // destructor = end of training
  const auto files = files_in(dir.path());
  ASSERT_EQ(files.size(), 1u);
  const auto trace = parse_file(files[0]);
  // Step 2's scope was opened after the last step() and closed empty by the destructor.
  EXPECT_EQ(step_scopes(trace), (std::vector<std::string>{"ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"}));
}

TEST(TrainingProfiler, NothingWrittenBeforeTheWindowOrWhenDisabled) {
  TempDir dir;
  auto w = torch::full({8, 4}, 0.1).set_requires_grad(true);
  {
    TrainingProfiler profiler(true, (fs::path(dir.path()) / "early").string());  // default: records steps 2..11
    tiny_step(w);
    profiler.step();  // step 1: warmup
    EXPECT_FALSE(profiler.recording());
    profiler.stop();  // ends in warmup: nothing recorded
    EXPECT_TRUE(profiler.trace_path().empty());
    profiler.step();  // after stop: no-op
  }
  EXPECT_TRUE(files_in(fs::path(dir.path()) / "early").empty());
  {
    TrainingProfiler profiler(false, (fs::path(dir.path()) / "off").string());
    for (int i = 0; i < 14; ++i) {
      tiny_step(w);
      profiler.step();
    }
    EXPECT_FALSE(profiler.recording());
  }
  EXPECT_FALSE(fs::exists(fs::path(dir.path()) / "off"));
  // A later profiler on the same thread still works (the earlier ones released the profiler).
  TrainingProfiler again(true, (fs::path(dir.path()) / "again").string(), ProfilerSchedule{0, 0, 1});
  tiny_step(w);
  again.step();
  EXPECT_FALSE(again.trace_path().empty());
}

TEST(TrainingProfiler, UncreatableTraceDirectoryThrowsIoErrorNamingIt) {
  TempDir dir;
  const fs::path file = fs::path(dir.path()) / "model_dir";
  std::ofstream(file) << "not a directory";
  const std::string trace_dir = (file / kTrainEvalTraceDir).string();
  try {
    TrainingProfiler profiler(true, trace_dir);
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(trace_dir), std::string::npos) << e.what();
  }
}

}  // namespace training_profiler_test
}  // namespace tzrec::observe
