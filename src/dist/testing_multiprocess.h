// Test helper: runs the body of a gtest test in N processes that form a process group on
// 127.0.0.1 (Gloo), one per rank.
//
// The test binary re-executes itself once per rank with --gtest_filter set to the running test and
// the torchrun variables in the environment; in those worker processes run_ranks() builds the
// ProcessGroup and calls the body, and gtest's own exit status reports the rank's result. In the
// launching process run_ranks() waits for all workers (bounded by a timeout, then kills them) and
// returns their wait statuses. No fork of a process that already runs torch threads.
//
//   TEST(Foo, Bar) {
//     auto statuses = testing::run_ranks(2, [](ProcessGroup& pg) { ... EXPECT_... ; });
//     testing::expect_all_succeeded(statuses);
//   }
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "dist/launcher.h"
#include "dist/process_group.h"

extern char** environ;

namespace tzrec::dist::testing {

inline constexpr const char* kWorkerVariable = "TZREC_TEST_RANK_WORKER";

inline bool is_rank_worker() { return std::getenv(kWorkerVariable) != nullptr; }

struct RankOptions {
  std::chrono::seconds timeout{120};                   // kill every worker after this long
  std::vector<std::pair<std::string, std::string>> env;  // extra variables for every worker
};

// Worker: runs body(pg) and returns {}. Launcher: starts `world_size` workers and returns their
// waitpid statuses in rank order (a worker still running at the timeout is SIGKILLed).
inline std::vector<int> run_ranks(int world_size, const std::function<void(ProcessGroup&)>& body,
                                  const RankOptions& options = {}) {
  if (is_rank_worker()) {
    auto pg = ProcessGroup::create(dist_env_from_environment());
    body(*pg);
    return {};
  }
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string filter =
      std::string("--gtest_filter=") + info->test_suite_name() + "." + info->name();
  const int port = pick_free_port("127.0.0.1");
  std::vector<pid_t> pids;
  for (int r = 0; r < world_size; ++r) {
    std::vector<std::string> vars;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string kv = *e;
      const std::string key = kv.substr(0, kv.find('='));
      if (key == "RANK" || key == "WORLD_SIZE" || key == "LOCAL_RANK" || key == "LOCAL_WORLD_SIZE" ||
          key == "MASTER_ADDR" || key == "MASTER_PORT" || key == "GROUP_RANK") {
        continue;
      }
      // GoogleTest's sharding (GTEST_SHARD_INDEX / GTEST_TOTAL_SHARDS of a CTest shard) would apply to
      // the worker's one-test filter too, and a worker outside shard 0 would run nothing.
      if (key.rfind("GTEST_", 0) == 0) continue;
      vars.push_back(kv);
    }
    vars.push_back(std::string(kWorkerVariable) + "=1");
    vars.push_back("RANK=" + std::to_string(r));
    vars.push_back("WORLD_SIZE=" + std::to_string(world_size));
    vars.push_back("LOCAL_RANK=" + std::to_string(r));
    vars.push_back("LOCAL_WORLD_SIZE=" + std::to_string(world_size));
    vars.push_back("MASTER_ADDR=127.0.0.1");
    vars.push_back("MASTER_PORT=" + std::to_string(port));
    vars.push_back("OMP_NUM_THREADS=1");
    for (const auto& [k, v] : options.env) vars.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (std::string& v : vars) envp.push_back(v.data());
    envp.push_back(nullptr);
    std::string exe = "/proc/self/exe";
    std::string quiet = "--gtest_brief=1";
    std::vector<char*> argv = {exe.data(), const_cast<char*>(filter.c_str()), quiet.data(), nullptr};
    pid_t pid = -1;
    if (posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv.data(), envp.data()) != 0) {
      ADD_FAILURE() << "could not start rank " << r;
      pid = -1;
    }
    pids.push_back(pid);
  }
  std::vector<int> statuses(world_size, -1);
  std::vector<bool> done(world_size, false);
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  int remaining = world_size;
  for (int r = 0; r < world_size; ++r) {
    if (pids[r] < 0) {
      done[r] = true;
      --remaining;
    }
  }
  while (remaining > 0) {
    for (int r = 0; r < world_size; ++r) {
      if (done[r]) continue;
      int status = 0;
      if (waitpid(pids[r], &status, WNOHANG) == pids[r]) {
        statuses[r] = status;
        done[r] = true;
        --remaining;
      }
    }
    if (remaining == 0) break;
    if (std::chrono::steady_clock::now() > deadline) {
      for (int r = 0; r < world_size; ++r) {
        if (!done[r]) {
          ::kill(pids[r], SIGKILL);
          waitpid(pids[r], &statuses[r], 0);
          ADD_FAILURE() << "rank " << r << " did not finish within " << options.timeout.count() << " s";
        }
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling process exit, bounded
  }
  return statuses;
}

// In the launcher: worker r exited with exit_codes[r] (a worker process returns gtest's verdict
// on its rank: 0 when its expectations held). No-op in a worker (statuses empty).
inline void expect_exit_codes(const std::vector<int>& statuses, const std::vector<int>& exit_codes) {
  if (statuses.empty()) return;
  ASSERT_EQ(statuses.size(), exit_codes.size());
  for (size_t r = 0; r < statuses.size(); ++r) {
    EXPECT_TRUE(WIFEXITED(statuses[r]) && WEXITSTATUS(statuses[r]) == exit_codes[r])
        << "rank " << r << " ended with wait status " << statuses[r] << ", expected exit code "
        << exit_codes[r] << "; its output is above";
  }
}

inline void expect_all_succeeded(const std::vector<int>& statuses) {
  expect_exit_codes(statuses, std::vector<int>(statuses.size(), 0));
}

}  // namespace tzrec::dist::testing
