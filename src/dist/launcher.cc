#include "dist/launcher.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <map>
#include <random>
#include <stdexcept>

#include "base/error.h"
#include "base/logging.h"

extern char** environ;

namespace tzrec::dist {
namespace {

constexpr int kMaxProcPerNode = 1024;

using Clock = std::chrono::steady_clock;

std::string errno_text(int err) { return std::strerror(err); }

// "SIGKILL"; "signal 42" where the C library has no name for it.
std::string signal_name(int signo) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
  if (const char* abbrev = ::sigabbrev_np(signo)) return std::string("SIG") + abbrev;
#endif
  return fmt::format("signal {}", signo);
}

std::string describe_signal(int signo) {
  const std::string name = signal_name(signo);
  return name.rfind("SIG", 0) == 0 ? fmt::format("signal {} ({})", signo, name) : name;
}

// How a worker ended, from waitid()'s siginfo or waitpid()'s status.
struct Outcome {
  bool signaled = false;
  int value = 0;  // exit status, or the signal number when signaled
  bool failed() const { return signaled || value != 0; }
  std::string describe() const {
    return signaled ? "was killed by " + describe_signal(value) : fmt::format("exited with status {}", value);
  }
};

// ---- signal plumbing: handlers only set flags and write a byte to a self-pipe that the
// supervision loop polls, so no work happens in signal context.
int g_wake_fds[2] = {-1, -1};
volatile sig_atomic_t g_stop_signal = 0;  // last stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) received
volatile sig_atomic_t g_stop_count = 0;   // how many were received
std::atomic<bool> g_launch_active{false};

extern "C" void launcher_on_signal(int signo) {
  const int saved_errno = errno;
  if (signo != SIGCHLD) {
    g_stop_signal = signo;
    g_stop_count = g_stop_count + 1;
  }
  const char byte = 0;
  ssize_t ignored = ::write(g_wake_fds[1], &byte, 1);  // a full pipe already wakes the loop
  (void)ignored;
  errno = saved_errno;
}

// Installs the handlers for one launch() and restores the previous ones on destruction. A stop
// signal that was ignored when the launcher started (e.g. SIGINT of a background job) stays ignored,
// and the workers inherit that.
class SignalScope {
 public:
  SignalScope() {
    if (::pipe2(g_wake_fds, O_CLOEXEC | O_NONBLOCK) != 0) {
      throw IoError("tzrec launch: cannot create a pipe: " + errno_text(errno));
    }
    g_stop_signal = 0;
    g_stop_count = 0;
    struct sigaction action {};
    action.sa_handler = launcher_on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    for (size_t i = 0; i < kSignals.size(); ++i) {
      ::sigaction(kSignals[i], nullptr, &previous_[i]);
      if (kSignals[i] != SIGCHLD && previous_[i].sa_handler == SIG_IGN) continue;
      ::sigaction(kSignals[i], &action, nullptr);
    }
  }
  ~SignalScope() {
    for (size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &previous_[i], nullptr);
    ::close(g_wake_fds[0]);
    ::close(g_wake_fds[1]);
    g_wake_fds[0] = g_wake_fds[1] = -1;
  }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

  // Waits until a signal arrives or timeout_ms passes, then empties the pipe.
  static void wait(int timeout_ms) {
    pollfd fd{g_wake_fds[0], POLLIN, 0};
    ::poll(&fd, 1, timeout_ms);  // EINTR just means "look again"
    char buffer[64];
    while (::read(g_wake_fds[0], buffer, sizeof(buffer)) > 0) {
    }
  }

  // In a forked child before execve (async-signal-safe): our handlers back to the default, so a
  // signal in that window acts on the child as it will after execve.
  static void reset_in_child() {
    struct sigaction current {};
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    for (int signo : kSignals) {
      if (::sigaction(signo, nullptr, &current) == 0 && current.sa_handler == launcher_on_signal) {
        ::sigaction(signo, &default_action, nullptr);
      }
    }
  }

 private:
  // SIGCHLD wakes the loop; the others are forwarded to the workers, like torchrun does.
  static constexpr std::array<int, 5> kSignals = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  std::array<struct sigaction, 5> previous_{};
};

// ---- worker processes

struct Worker {
  int local_rank = 0;
  int rank = 0;
  pid_t pid = -1;
  bool exited = false;  // observed with WNOWAIT: still a zombie, so its pid / pgid stay ours
  Outcome outcome;
};

// NUL-terminated argv / envp arrays for execve, built before fork().
struct ExecImage {
  std::string path;
  std::vector<std::string> argv;
  std::vector<std::string> envp;
};

std::vector<char*> c_array(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Starts one worker in its own process group. Returns its pid, or throws UsageError when the
// program cannot be executed (the failed child is reaped).
pid_t spawn(ExecImage& image) {
  std::vector<char*> argv = c_array(image.argv);
  std::vector<char*> envp = c_array(image.envp);
  int exec_error_fds[2];
  if (::pipe2(exec_error_fds, O_CLOEXEC) != 0) {
    throw IoError("tzrec launch: cannot create a pipe: " + errno_text(errno));
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(exec_error_fds[0]);
    ::close(exec_error_fds[1]);
    throw IoError("tzrec launch: fork failed: " + errno_text(err));
  }
  if (pid == 0) {
    // Child: async-signal-safe calls only until execve.
    ::setpgid(0, 0);
#ifdef __linux__
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the launcher died before prctl took effect
#endif
    SignalScope::reset_in_child();
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::close(exec_error_fds[0]);
    ::execve(image.path.c_str(), argv.data(), envp.data());
    const int err = errno;
    ssize_t ignored = ::write(exec_error_fds[1], &err, sizeof(err));
    (void)ignored;
    ::_exit(127);
  }
  (void)parent;
  ::setpgid(pid, pid);  // also from the parent, so the group exists before any killpg (EACCES after exec is fine)
  ::close(exec_error_fds[1]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(exec_error_fds[0], &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  ::close(exec_error_fds[0]);
  if (n > 0) {
    int status;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    throw UsageError(fmt::format("tzrec launch: cannot execute '{}': {}; check that it is an executable "
                                 "for this machine",
                                 image.path, errno_text(child_errno)));
  }
  return pid;
}

void signal_group(const Worker& worker, int signo) {
  // The worker is not reaped yet (at worst a zombie), so its pid is still its process group's id.
  if (::killpg(worker.pid, signo) != 0 && errno == ESRCH) ::kill(worker.pid, signo);
}

void reap(Worker& worker) {
  int status = 0;
  while (::waitpid(worker.pid, &status, 0) < 0 && errno == EINTR) {
  }
}

// Looks (without reaping) whether the worker has ended; true when it is newly seen to have ended.
bool poll_exit(Worker& worker) {
  if (worker.exited) return false;
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(worker.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    if (errno == EINTR) return false;
    // ECHILD: someone else reaped it (SIGCHLD set to SIG_IGN elsewhere); nothing left to wait for.
    worker.exited = true;
    worker.outcome = Outcome{false, 0};
    return true;
  }
  if (info.si_pid != worker.pid) return false;
  worker.exited = true;
  worker.outcome.signaled = info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED;
  worker.outcome.value = info.si_status;
  return true;
}

std::string quote_command(const std::vector<std::string>& command) {
  std::string out;
  for (const auto& arg : command) {
    if (!out.empty()) out += ' ';
    const bool plain = !arg.empty() && arg.find_first_of(" \t\n'\"\\$`") == std::string::npos;
    if (plain) {
      out += arg;
      continue;
    }
    out += '\'';
    for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The launcher's environment with extra_env and the rank variables of `local_rank` applied.
std::vector<std::string> worker_environment(const std::map<std::string, std::string>& base,
                                            const LaunchOptions& options, int port, int local_rank) {
  std::map<std::string, std::string> env = base;
  env["RANK"] = std::to_string(options.node_rank * options.nproc_per_node + local_rank);
  env["WORLD_SIZE"] = std::to_string(options.nnodes * options.nproc_per_node);
  env["LOCAL_RANK"] = std::to_string(local_rank);
  env["LOCAL_WORLD_SIZE"] = std::to_string(options.nproc_per_node);
  env["GROUP_RANK"] = std::to_string(options.node_rank);
  env["MASTER_ADDR"] = options.master_addr;
  env["MASTER_PORT"] = std::to_string(port);
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [key, value] : env) out.push_back(key + "=" + value);
  return out;
}

// Environment shared by all workers: the launcher's, extra_env, and OMP_NUM_THREADS.
std::map<std::string, std::string> common_environment(const LaunchOptions& options) {
  std::map<std::string, std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const char* eq = std::strchr(*entry, '=');
    if (eq == nullptr) continue;
    env.emplace(std::string(*entry, static_cast<size_t>(eq - *entry)), std::string(eq + 1));
  }
  for (const auto& [key, value] : options.extra_env) env[key] = value;
  if (options.nproc_per_node > 1 && env.count("OMP_NUM_THREADS") == 0) {
    const long cpus = std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
    const long threads = std::max(1L, cpus / options.nproc_per_node);
    env["OMP_NUM_THREADS"] = std::to_string(threads);
    log::info("OMP_NUM_THREADS is not set: setting it to {} for each worker ({} online cpus / {} workers); "
              "set OMP_NUM_THREADS to override",
              threads, cpus, options.nproc_per_node);
  }
  return env;
}

// Supervises the started workers until all of them have ended (see launch()).
class Supervisor {
 public:
  Supervisor(std::vector<Worker>& workers, double grace_seconds)
      : workers_(workers),
        grace_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace_seconds))) {}

  int run() {
    int signals_seen = 0;
    while (true) {
      for (auto& worker : workers_) {
        if (poll_exit(worker)) on_exit(worker);
      }
      if (running() == 0) break;
      if (g_stop_count != signals_seen) {
        signals_seen = g_stop_count;
        on_launcher_signal(g_stop_signal);
      }
      int timeout_ms = 1000;  // backstop; SIGCHLD and the stop signals wake the loop earlier
      if (stopping_ && !killed_) {
        const auto left = deadline_ - Clock::now();
        if (left <= Clock::duration::zero()) {
          kill_running();
          continue;
        }
        timeout_ms = static_cast<int>(std::min<int64_t>(
            timeout_ms, std::chrono::duration_cast<std::chrono::milliseconds>(left).count() + 1));
      }
      SignalScope::wait(timeout_ms);
    }
    if (stopping_) {
      // Leaders are all gone; whatever is left in their groups (children that ignored SIGTERM) goes now.
      for (const auto& worker : workers_) signal_group(worker, SIGKILL);
    }
    for (auto& worker : workers_) reap(worker);
    if (stop_signal_ != 0) return 128 + stop_signal_;
    if (first_failure_ != nullptr) return 1;
    log::info("{} exited with status 0", workers_.size() == 1 ? std::string("the worker")
                                                              : fmt::format("all {} workers", workers_.size()));
    return 0;
  }

 private:
  size_t running() const {
    return std::count_if(workers_.begin(), workers_.end(), [](const Worker& w) { return !w.exited; });
  }

  std::string name(const Worker& worker) const {
    return fmt::format("worker local_rank {} (rank {}, pid {})", worker.local_rank, worker.rank, worker.pid);
  }

  void on_exit(const Worker& worker) {
    if (!worker.outcome.failed()) {
      log::debug("{} exited with status 0", name(worker));
      return;
    }
    if (!stopping_) {
      first_failure_ = &worker;
      const size_t others = running();
      if (others == 0) {
        log::error("{} {}", name(worker), worker.outcome.describe());
      } else {
        log::error("{} {}; stopping the other {} running worker{} (SIGTERM, SIGKILL after {} s)", name(worker),
                   worker.outcome.describe(), others, others == 1 ? "" : "s", grace_seconds());
      }
      stop(SIGTERM);
      return;
    }
    const std::string cause = first_failure_ != nullptr
                                  ? fmt::format("local_rank {} failed", first_failure_->local_rank)
                                  : fmt::format("the launcher received {}", signal_name(stop_signal_));
    log::warning("{} {} (after {})", name(worker), worker.outcome.describe(), cause);
  }

  void on_launcher_signal(int signo) {
    if (!stopping_) {
      stop_signal_ = signo;
      log::warning("received {}: forwarding it to the {} running workers (SIGKILL after {} s)",
                   signal_name(signo), running(), grace_seconds());
      stop(signo);
    } else if (!killed_) {
      log::warning("received {} while stopping the workers: sending SIGKILL now", signal_name(signo));
      kill_running();
    }
  }

  // Sends `signo` to every worker's process group (ended ones included: their children may live on)
  // and starts the grace period.
  void stop(int signo) {
    stopping_ = true;
    deadline_ = Clock::now() + grace_;
    for (const auto& worker : workers_) signal_group(worker, signo);
  }

  void kill_running() {
    killed_ = true;
    std::string ranks;
    for (const auto& worker : workers_) {
      if (worker.exited) continue;
      ranks += fmt::format("{}{}", ranks.empty() ? "" : ", ", worker.local_rank);
      signal_group(worker, SIGKILL);
    }
    if (!ranks.empty()) log::warning("sending SIGKILL to the workers still running (local_rank {})", ranks);
  }

  double grace_seconds() const { return std::chrono::duration<double>(grace_).count(); }

  std::vector<Worker>& workers_;
  Clock::duration grace_;
  bool stopping_ = false;
  bool killed_ = false;
  Clock::time_point deadline_{};
  const Worker* first_failure_ = nullptr;
  int stop_signal_ = 0;
};

}  // namespace

void validate_launch_options(const LaunchOptions& options) {
  if (options.nproc_per_node < 1 || options.nproc_per_node > kMaxProcPerNode) {
    throw UsageError(fmt::format("--nproc-per-node {} is out of range: give the number of workers to start "
                                 "on this node, from 1 to {}",
                                 options.nproc_per_node, kMaxProcPerNode));
  }
  if (options.nnodes < 1) {
    throw UsageError(fmt::format("--nnodes {} is out of range: give the number of nodes of the job (>= 1)",
                                 options.nnodes));
  }
  if (static_cast<int64_t>(options.nnodes) * options.nproc_per_node > INT_MAX) {
    throw UsageError(fmt::format("--nnodes {} x --nproc-per-node {} is too large a world size",
                                 options.nnodes, options.nproc_per_node));
  }
  if (options.node_rank < 0 || options.node_rank >= options.nnodes) {
    throw UsageError(fmt::format("--node-rank {} is out of range for --nnodes {}: give a value from 0 to {}",
                                 options.node_rank, options.nnodes, options.nnodes - 1));
  }
  if (options.master_addr.empty()) {
    throw UsageError("--master-addr is empty: give the host name or IP address of the node of rank 0");
  }
  if (options.master_port < 0 || options.master_port > 65535) {
    throw UsageError(fmt::format("--master-port {} is out of range: give a TCP port from 1 to 65535, or 0 "
                                 "to pick a free one (single node only)",
                                 options.master_port));
  }
  if (options.master_port == 0 && options.nnodes > 1) {
    throw UsageError(fmt::format("--master-port 0 (pick a free port) works only with --nnodes 1; with "
                                 "--nnodes {} give the same explicit --master-port on every node",
                                 options.nnodes));
  }
  if (options.command.empty() || options.command[0].empty()) {
    throw UsageError("no worker command given: put it after '--', e.g. "
                     "`tzrec launch --nproc-per-node 2 -- train_eval --pipeline_config_path x.config`");
  }
  if (!std::isfinite(options.term_grace_seconds) || options.term_grace_seconds < 0 ||
      options.term_grace_seconds > 1e6) {
    throw UsageError(fmt::format("term grace period {} s is invalid: give a number of seconds from 0 to 1e6",
                                 options.term_grace_seconds));
  }
  for (const auto& [key, value] : options.extra_env) {
    if (key.empty() || key.find('=') != std::string::npos || key.find('\0') != std::string::npos ||
        value.find('\0') != std::string::npos) {
      throw UsageError(fmt::format("environment variable name '{}' is invalid: give a non-empty name "
                                   "without '='",
                                   key));
    }
  }
}

std::string resolve_program(const std::string& program) {
  if (program.empty()) throw UsageError("the worker program name is empty: give a program after '--'");
  if (program.find('/') != std::string::npos) {
    if (::access(program.c_str(), F_OK) != 0) {
      throw UsageError(fmt::format("worker program '{}' does not exist: check the path", program));
    }
    if (!is_executable_file(program)) {
      throw UsageError(fmt::format("worker program '{}' is not an executable file: check the path or "
                                   "its permissions (chmod +x)",
                                   program));
    }
    return program;
  }
  const char* env_path = std::getenv("PATH");
  const std::string path = env_path != nullptr ? env_path : "/usr/local/bin:/usr/bin:/bin";
  size_t begin = 0;
  while (begin <= path.size()) {
    size_t end = path.find(':', begin);
    if (end == std::string::npos) end = path.size();
    const std::string dir = path.substr(begin, end - begin);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + program;
    if (is_executable_file(candidate)) return candidate;
    begin = end + 1;
  }
  throw UsageError(fmt::format("worker program '{}' not found in PATH ({}): give its full path or add its "
                               "directory to PATH",
                               program, path));
}

namespace {

// The lowest port the kernel hands out for bind(0) and outgoing connections
// (/proc/sys/net/ipv4/ip_local_port_range; Linux's default 32768 when unreadable).
int ephemeral_port_floor() {
  int floor = 32768;
  if (FILE* f = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) {
    int low = 0;
    int high = 0;
    if (std::fscanf(f, "%d %d", &low, &high) == 2 && low > 1024 && low <= 65535) floor = low;
    std::fclose(f);
  }
  return floor;
}

// Binds a socket of `ai`'s family to `port` (0: the kernel chooses) and returns the port bound, or 0
// with `error` set.
int bind_port(const addrinfo& ai, int port, std::string& error) {
  const int fd = ::socket(ai.ai_family, ai.ai_socktype | SOCK_CLOEXEC, ai.ai_protocol);
  if (fd < 0) {
    error = errno_text(errno);
    return 0;
  }
  sockaddr_storage wanted{};
  std::memcpy(&wanted, ai.ai_addr, ai.ai_addrlen);
  if (wanted.ss_family == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(&wanted)->sin6_port = htons(static_cast<uint16_t>(port));
  } else {
    reinterpret_cast<sockaddr_in*>(&wanted)->sin_port = htons(static_cast<uint16_t>(port));
  }
  int bound_port = 0;
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&wanted), ai.ai_addrlen) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) == 0) {
    bound_port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                             : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  } else {
    error = errno_text(errno);
  }
  ::close(fd);
  return bound_port;
}

}  // namespace

int pick_free_port(const std::string& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* results = nullptr;
  const int rc = ::getaddrinfo(address.c_str(), "0", &hints, &results);
  if (rc != 0) {
    throw UsageError(fmt::format("cannot resolve --master-addr '{}': {}; give a host name or IP address "
                                 "of this machine",
                                 address, ::gai_strerror(rc)));
  }
  // A port below the ephemeral range: no connection's own source port and no bind(0) elsewhere takes
  // it between this check and the master's listen, and a worker that connects before the master
  // listens cannot be connected to itself (a TCP self-connect needs the destination port to be a
  // possible source port).
  const int ceiling = ephemeral_port_floor();
  const int floor = std::max(1024, ceiling - 12000);
  std::random_device entropy;
  std::mt19937 draw(entropy());
  std::uniform_int_distribution<int> candidate(floor, ceiling - 1);
  std::string last_error = "no address";
  int port = 0;
  for (addrinfo* ai = results; ai != nullptr && port == 0; ai = ai->ai_next) {
    for (int attempt = 0; attempt < 64 && port == 0 && floor < ceiling; ++attempt) {
      port = bind_port(*ai, candidate(draw), last_error);
    }
    if (port == 0) port = bind_port(*ai, 0, last_error);  // every candidate taken: the kernel's choice
  }
  ::freeaddrinfo(results);
  if (port == 0) {
    throw UsageError(fmt::format("cannot bind a TCP port on --master-addr '{}': {}; give an address of this "
                                 "machine or an explicit --master-port",
                                 address, last_error));
  }
  return port;
}

std::string describe_wait_status(int status) {
  if (WIFSIGNALED(status)) return Outcome{true, WTERMSIG(status)}.describe();
  if (WIFEXITED(status)) return Outcome{false, WEXITSTATUS(status)}.describe();
  return fmt::format("changed state (wait status {:#x})", status);
}

int launch(const LaunchOptions& options) {
  validate_launch_options(options);
  ExecImage image;
  image.path = resolve_program(options.command[0]);
  image.argv = options.command;
  const int port = options.master_port != 0 ? options.master_port : pick_free_port(options.master_addr);

  if (g_launch_active.exchange(true)) throw std::logic_error("tzrec::dist::launch() is already running");
  struct ActiveReset {
    ~ActiveReset() { g_launch_active = false; }
  } active_reset;
  const std::map<std::string, std::string> env = common_environment(options);
  const int first_rank = options.node_rank * options.nproc_per_node;
  log::info("launching {} worker{} (ranks {}..{} of world size {}, node {} of {}), master {}:{}: {}",
            options.nproc_per_node, options.nproc_per_node == 1 ? "" : "s", first_rank,
            first_rank + options.nproc_per_node - 1,
            options.nnodes * options.nproc_per_node, options.node_rank, options.nnodes, options.master_addr,
            port, quote_command(options.command));

  SignalScope signals;
  std::vector<Worker> workers;
  workers.reserve(options.nproc_per_node);
  try {
    for (int i = 0; i < options.nproc_per_node; ++i) {
      image.envp = worker_environment(env, options, port, i);
      Worker worker;
      worker.local_rank = i;
      worker.rank = first_rank + i;
      worker.pid = spawn(image);
      workers.push_back(worker);
    }
  } catch (...) {
    // Exceptions propagate; the workers already started must not outlive them.
    for (auto& worker : workers) signal_group(worker, SIGKILL);
    for (auto& worker : workers) reap(worker);
    throw;
  }
  return Supervisor(workers, options.term_grace_seconds).run();
}

}  // namespace tzrec::dist
