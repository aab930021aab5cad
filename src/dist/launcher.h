// A torchrun-compatible local launcher (`tzrec launch`): starts the workers of one node with the
// rendezvous variables that dist::dist_env_from_environment() reads, waits for them, and tears the
// whole node down when one of them fails. Plain POSIX, no torch: it works on hosts without Python.
//
// Worker i of node n gets (on top of the launcher's own environment and LaunchOptions::extra_env):
//   RANK = n * nproc_per_node + i     WORLD_SIZE = nnodes * nproc_per_node
//   LOCAL_RANK = i                    LOCAL_WORLD_SIZE = nproc_per_node
//   GROUP_RANK = n                    MASTER_ADDR, MASTER_PORT (the picked port when 0 was asked)
//   OMP_NUM_THREADS = max(1, online cpus / nproc_per_node), only when it is set nowhere else and
//                     nproc_per_node > 1 (torchrun sets 1; a CPU engine shares the cores instead).
//
// Each worker runs in its own process group (like torchrun's start_new_session), so signals reach
// the worker's own children too. Workers inherit stdin, stdout and stderr.
//
// Failure handling: the first worker that exits non-zero or dies by a signal is logged as the cause;
// every worker process group then gets SIGTERM, and SIGKILL after term_grace_seconds. A SIGINT,
// SIGTERM, SIGHUP or SIGQUIT delivered to the launcher is forwarded to the workers with the same
// cleanup (a second one sends SIGKILL at once); one that was ignored when launch() started stays
// ignored (a background job's SIGINT), in the launcher and in the workers. launch() returns only after every worker has been reaped and their process
// groups have been sent a final SIGKILL, so no worker outlives a failed launch. On Linux a worker is
// also SIGKILLed when the launcher's thread dies (PR_SET_PDEATHSIG), so even `kill -9` of the
// launcher leaves no orphans.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace tzrec::dist {

struct LaunchOptions {
  int nproc_per_node = 1;                  // workers on this node, >= 1
  int nnodes = 1;                          // nodes in the job, >= 1
  int node_rank = 0;                       // this node, in [0, nnodes)
  std::string master_addr = "127.0.0.1";   // host of rank 0 (the TCPStore)
  int master_port = 29500;                 // in [0, 65535]; 0 = pick a free port (nnodes == 1 only)
  std::vector<std::string> command;        // argv of each worker; command[0]: a path, or a name
                                           // looked up in PATH
  double term_grace_seconds = 10;          // after a failure: SIGTERM, then SIGKILL after this long
  std::map<std::string, std::string> extra_env;  // added to each worker's environment; the rank
                                                 // variables above take precedence
};

// Checks the options; a bad one → tzrec::UsageError saying which option and how to fix it.
void validate_launch_options(const LaunchOptions& options);

// Resolves a program like execvp would: a name with a '/' is taken as a path, otherwise PATH is
// searched. Returns the path of an executable regular file, or throws tzrec::UsageError naming the
// program (and the PATH searched).
std::string resolve_program(const std::string& program);

// A free TCP port at `address` (an IP address or host name) for the master's store: a random port
// below the kernel's ephemeral range that a socket could bind (the socket is closed again), or the
// kernel's choice for port 0 when 64 of them are taken. Failure → tzrec::UsageError naming the
// address.
int pick_free_port(const std::string& address);

// "exited with status 3" / "was killed by signal 9 (SIGKILL)" for a waitpid() status.
std::string describe_wait_status(int status);

// Starts options.nproc_per_node workers, waits for all of them and returns the exit status for the
// launcher's process: 0 when every worker exited 0, 1 when a worker failed (torchrun's
// ChildFailedError), 128 + signal number when the launcher was stopped by a forwarded signal.
// Bad options, a program that cannot be found or executed → tzrec::UsageError (no worker is left
// running). Installs SIGCHLD / SIGINT / SIGTERM / SIGHUP / SIGQUIT handlers for its duration and
// restores the previous ones; only one launch() may run at a time in a process.
int launch(const LaunchOptions& options);

}  // namespace tzrec::dist
