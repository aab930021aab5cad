// Tests of the local launcher with /bin/sh workers: environment of each rank, failure propagation,
// SIGTERM → SIGKILL escalation, signal forwarding, free-port picking and option validation.
#include "dist/launcher.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "base/scoped_env.h"

namespace tzrec::dist {
namespace launcher_test {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "tzrec_launcher_test_XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Sets (or unsets) an environment variable for the scope of a test.
std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

// Waits (at most 5 s) until every path exists.
bool wait_for_files(const std::vector<std::string>& paths) {
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < deadline) {
    bool all = true;
    for (const auto& p : paths) all = all && fs::exists(p);
    if (all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// A process is gone when /proc has no entry for it or it is a zombie waiting for its new parent.
bool process_gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

// Polls (at most 3 s): a signalled process may take a moment to die.
bool eventually_gone(pid_t pid) {
  const auto deadline = Clock::now() + std::chrono::seconds(3);
  while (Clock::now() < deadline) {
    if (process_gone(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return process_gone(pid);
}

// Runs `script` as each worker (`/bin/sh -c script`), with $DIR pointing at `dir`.
LaunchOptions sh_options(const TempDir& dir, int nproc, const std::string& script) {
  LaunchOptions options;
  options.nproc_per_node = nproc;
  options.master_port = 29555;
  options.command = {"/bin/sh", "-c", script};
  options.extra_env["DIR"] = dir.path();
  return options;
}

constexpr const char* kWriteEnv =
    "echo \"$RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $GROUP_RANK $MASTER_ADDR $MASTER_PORT "
    "$OMP_NUM_THREADS\" > \"$DIR/$LOCAL_RANK\"";

// Writes the worker's pid to $DIR/pid.<local_rank> atomically.
constexpr const char* kWritePid = "echo $$ > \"$DIR/tmp.$LOCAL_RANK\" && mv \"$DIR/tmp.$LOCAL_RANK\" "
                                  "\"$DIR/pid.$LOCAL_RANK\"; ";

TEST(LauncherTest, ThreeWorkersSeeTheirRankVariables) {
  ScopedEnv omp("OMP_NUM_THREADS", nullptr);
  TempDir dir;
  auto options = sh_options(dir, 3, kWriteEnv);
  EXPECT_EQ(launch(options), 0);
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  const long omp_threads = cpus / 3 >= 1 ? cpus / 3 : 1;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(read_file(dir.file(std::to_string(i))),
              fmt::format("{} 3 {} 3 0 127.0.0.1 29555 {}", i, i, omp_threads))
        << "local rank " << i;
  }
}

TEST(LauncherTest, SecondNodeGetsOffsetRanksAndKeepsOmpNumThreads) {
  ScopedEnv omp("OMP_NUM_THREADS", "5");
  TempDir dir;
  auto options = sh_options(dir, 2, kWriteEnv);
  options.nnodes = 2;
  options.node_rank = 1;
  options.master_addr = "10.1.2.3";
  options.master_port = 23456;
  EXPECT_EQ(launch(options), 0);
  EXPECT_EQ(read_file(dir.file("0")), "2 4 0 2 1 10.1.2.3 23456 5");
  EXPECT_EQ(read_file(dir.file("1")), "3 4 1 2 1 10.1.2.3 23456 5");
}

TEST(LauncherTest, ExtraEnvOmpWinsAndSingleWorkerGetsNoOmp) {
  ScopedEnv omp("OMP_NUM_THREADS", nullptr);
  TempDir dir;
  auto options = sh_options(dir, 2, kWriteEnv);
  options.extra_env["OMP_NUM_THREADS"] = "7";
  EXPECT_EQ(launch(options), 0);
  EXPECT_EQ(read_file(dir.file("1")), "1 2 1 2 0 127.0.0.1 29555 7");

  TempDir single_dir;
  auto single = sh_options(single_dir, 1, kWriteEnv);
  EXPECT_EQ(launch(single), 0);
  EXPECT_EQ(read_file(single_dir.file("0")), "0 1 0 1 0 127.0.0.1 29555 ");
}

TEST(LauncherTest, ArgumentsReachTheWorkerUnsplit) {
  TempDir dir;
  LaunchOptions options;
  options.extra_env["DIR"] = dir.path();
  // Program found through PATH; "a b" and "$HOME" must arrive verbatim (no shell in between).
  options.command = {"sh", "-c", "printf '%s|' \"$@\" > \"$DIR/args\"", "sh", "a b", "$HOME", ""};
  EXPECT_EQ(launch(options), 0);
  EXPECT_EQ(read_file(dir.file("args")), "a b|$HOME||");
}

TEST(LauncherTest, FailingWorkerStopsTheOthersAndTheirChildren) {
  TempDir dir;
  // local rank 0 fails once the others are up; rank 1 sleeps in a child of its shell (same process
  // group), rank 2 is the sleep itself.
  const std::string script =
      std::string(kWritePid) +
      "case $LOCAL_RANK in "
      "0) for i in $(seq 1 500); do [ -e \"$DIR/pid.1\" ] && [ -e \"$DIR/pid.2\" ] && "
      "[ -e \"$DIR/child.1\" ] && exit 3; sleep 0.01; done; exit 4;; "
      "1) sleep 30 & echo $! > \"$DIR/tmp.child\"; mv \"$DIR/tmp.child\" \"$DIR/child.1\"; wait;; "
      "2) exec sleep 30;; esac";
  auto options = sh_options(dir, 3, script);
  options.term_grace_seconds = 2;
  testing::internal::CaptureStderr();
  const auto start = Clock::now();
  const int status = launch(options);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, 1);
  EXPECT_LT(seconds, 2.0) << "SIGTERM alone should have stopped the sleepers";
  const pid_t pid0 = std::stoi(read_file(dir.file("pid.0")));
  EXPECT_NE(log.find(fmt::format("worker local_rank 0 (rank 0, pid {}) exited with status 3", pid0)),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("was killed by signal 15 (SIGTERM) (after local_rank 0 failed)"),
            std::string::npos)
      << log;
  for (const char* name : {"pid.0", "pid.1", "pid.2", "child.1"}) {
    const pid_t pid = std::stoi(read_file(dir.file(name)));
    EXPECT_TRUE(eventually_gone(pid)) << name << " pid " << pid << " still running";
  }
}

TEST(LauncherTest, WorkerKilledBySignalFailsTheLaunch) {
  TempDir dir;
  auto options = sh_options(dir, 2, "if [ $LOCAL_RANK = 1 ]; then kill -9 $$; fi; exit 0");
  testing::internal::CaptureStderr();
  EXPECT_EQ(launch(options), 1);
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("worker local_rank 1 (rank 1, pid "), std::string::npos) << log;
  EXPECT_NE(log.find("was killed by signal 9 (SIGKILL)"), std::string::npos) << log;
}

TEST(LauncherTest, WorkerIgnoringSigtermIsKilledAfterTheGracePeriod) {
  TempDir dir;
  // local rank 0 announces itself only once it ignores SIGTERM; local rank 1 then fails.
  const std::string script = "if [ $LOCAL_RANK = 0 ]; then trap '' TERM; " + std::string(kWritePid) +
                             "exec sleep 30; fi; "
                             "for i in $(seq 1 500); do [ -e \"$DIR/pid.0\" ] && exit 2; sleep 0.01; done";
  auto options = sh_options(dir, 2, script);
  options.term_grace_seconds = 0.5;
  testing::internal::CaptureStderr();
  const auto start = Clock::now();
  const int status = launch(options);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, 1);
  EXPECT_GE(seconds, 0.5);
  EXPECT_LT(seconds, 3.0);
  EXPECT_NE(log.find("worker local_rank 1 (rank 1, pid "), std::string::npos) << log;
  EXPECT_NE(log.find("exited with status 2"), std::string::npos) << log;
  EXPECT_NE(log.find("sending SIGKILL to the workers still running (local_rank 0)"), std::string::npos) << log;
  EXPECT_NE(log.find("was killed by signal 9 (SIGKILL) (after local_rank 1 failed)"),
            std::string::npos)
      << log;
  EXPECT_TRUE(process_gone(std::stoi(read_file(dir.file("pid.0")))));
}

TEST(LauncherTest, SigtermToTheLauncherIsForwarded) {
  TempDir dir;
  auto options = sh_options(dir, 2, std::string(kWritePid) + "exec sleep 30");
  options.term_grace_seconds = 3;
  const std::vector<std::string> pid_files = {dir.file("pid.0"), dir.file("pid.1")};
  // The pid files exist only once launch() has installed its handlers and started the workers.
  std::thread sender([&] {
    if (wait_for_files(pid_files)) ::kill(::getpid(), SIGTERM);
  });
  const auto start = Clock::now();
  const int status = launch(options);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  sender.join();
  EXPECT_EQ(status, 128 + SIGTERM);
  EXPECT_LT(seconds, 3.0);
  for (const auto& file : pid_files) EXPECT_TRUE(process_gone(std::stoi(read_file(file)))) << file;
}

// Bit of `signo` in the SigIgn mask of /proc/<pid>/status, as written there by the worker.
bool ignores(const std::string& status_line, int signo) {
  const unsigned long long mask = std::stoull(status_line.substr(status_line.find(':') + 1), nullptr, 16);
  return (mask >> (signo - 1)) & 1;
}

TEST(LauncherTest, SignalIgnoredByTheLauncherStaysIgnoredInWorkers) {
  TempDir dir;
  auto options = sh_options(dir, 1, "grep SigIgn /proc/self/status > \"$DIR/sigign\"");
  struct sigaction ignore {}, previous {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGHUP, &ignore, &previous);
  EXPECT_EQ(launch(options), 0);
  struct sigaction after {};
  ::sigaction(SIGHUP, &previous, &after);
  EXPECT_EQ(after.sa_handler, SIG_IGN) << "launch() must restore the disposition it found";
  const std::string ignored = read_file(dir.file("sigign"));
  EXPECT_TRUE(ignores(ignored, SIGHUP)) << ignored;
  EXPECT_FALSE(ignores(ignored, SIGTERM)) << ignored;
  EXPECT_FALSE(ignores(ignored, SIGINT)) << ignored;
}

TEST(LauncherTest, MasterPortZeroPicksOneFreePortForAllWorkers) {
  TempDir dir;
  auto options = sh_options(dir, 3, "echo $MASTER_PORT > \"$DIR/$LOCAL_RANK\"");
  options.master_port = 0;
  EXPECT_EQ(launch(options), 0);
  const int port = std::stoi(read_file(dir.file("0")));
  EXPECT_GT(port, 0);
  EXPECT_LE(port, 65535);
  EXPECT_EQ(read_file(dir.file("1")), std::to_string(port));
  EXPECT_EQ(read_file(dir.file("2")), std::to_string(port));
}

TEST(LauncherTest, PickFreePort) {
  // Below the kernel's ephemeral range (Linux's default floor 32768, or what this machine sets), so
  // that no outgoing connection can take it as its source port.
  int floor = 32768;
  if (FILE* f = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) {
    int high = 0;
    if (std::fscanf(f, "%d %d", &floor, &high) != 2) floor = 32768;
    std::fclose(f);
  }
  for (int i = 0; i < 20; ++i) {
    const int port = pick_free_port("127.0.0.1");
    EXPECT_GT(port, 1023);
    EXPECT_LT(port, floor);
  }
  // 192.0.2.1 (TEST-NET-1) is no address of this machine: binding fails.
  EXPECT_THROW(pick_free_port("192.0.2.1"), UsageError);
}

TEST(LauncherTest, AllWorkersExitZero) {
  TempDir dir;
  EXPECT_EQ(launch(sh_options(dir, 4, "exit 0")), 0);
}

TEST(LauncherTest, DescribeWaitStatus) {
  auto status_of = [](int how) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (how < 0) ::kill(::getpid(), -how);
      ::_exit(how);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
  };
  EXPECT_EQ(describe_wait_status(status_of(3)), "exited with status 3");
  EXPECT_EQ(describe_wait_status(status_of(0)), "exited with status 0");
  EXPECT_EQ(describe_wait_status(status_of(-SIGKILL)), "was killed by signal 9 (SIGKILL)");
}

// launch() must reject `options` with a UsageError whose message contains `needle`.
void expect_usage_error(const LaunchOptions& options, const std::string& needle) {
  try {
    launch(options);
    ADD_FAILURE() << "no UsageError; expected one mentioning '" << needle << "'";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(LauncherTest, BadOptionsThrowUsageError) {
  TempDir dir;
  const LaunchOptions good = sh_options(dir, 1, "touch \"$DIR/ran\"");
  auto with = [&](auto edit) {
    LaunchOptions o = good;
    edit(o);
    return o;
  };
  expect_usage_error(with([](LaunchOptions& o) { o.nproc_per_node = 0; }), "--nproc-per-node 0");
  expect_usage_error(with([](LaunchOptions& o) { o.nproc_per_node = 100000; }), "--nproc-per-node");
  expect_usage_error(with([](LaunchOptions& o) { o.nnodes = 0; }), "--nnodes 0");
  expect_usage_error(with([](LaunchOptions& o) { o.node_rank = -1; }), "--node-rank -1");
  expect_usage_error(with([](LaunchOptions& o) { o.nnodes = 2, o.node_rank = 2; }), "from 0 to 1");
  expect_usage_error(with([](LaunchOptions& o) { o.master_port = -1; }), "--master-port -1");
  expect_usage_error(with([](LaunchOptions& o) { o.master_port = 65536; }), "--master-port 65536");
  expect_usage_error(with([](LaunchOptions& o) { o.master_port = 0, o.nnodes = 2; }), "--nnodes 1");
  expect_usage_error(with([](LaunchOptions& o) { o.master_addr = ""; }), "--master-addr");
  expect_usage_error(with([](LaunchOptions& o) { o.command.clear(); }), "after '--'");
  expect_usage_error(with([](LaunchOptions& o) { o.term_grace_seconds = -1; }), "grace");
  expect_usage_error(with([](LaunchOptions& o) { o.extra_env["A=B"] = "1"; }), "'A=B'");
  expect_usage_error(with([](LaunchOptions& o) { o.command = {"tzrec-no-such-program"}; }),
                     "'tzrec-no-such-program' not found in PATH");
  expect_usage_error(with([](LaunchOptions& o) { o.command = {"/nonexistent/prog"}; }),
                     "'/nonexistent/prog' does not exist");
  // A file without the executable bit, and one with it that execve cannot run.
  const std::string text = dir.file("text");
  std::ofstream(text) << "not a program\n";
  expect_usage_error(with([&](LaunchOptions& o) { o.command = {text}; }), "is not an executable file");
  ::chmod(text.c_str(), 0755);
  expect_usage_error(with([&](LaunchOptions& o) { o.command = {text}; }), "cannot execute '" + text + "'");
  EXPECT_FALSE(fs::exists(dir.file("ran")));
  // The unchanged options are fine.
  EXPECT_EQ(launch(good), 0);
  EXPECT_TRUE(fs::exists(dir.file("ran")));
}

}  // namespace launcher_test
}  // namespace tzrec::dist
