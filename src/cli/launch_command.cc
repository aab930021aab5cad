// `tzrec launch`: starts the workers of one node for distributed training, without Python. Same
// effect as `torchrun --no-python --nproc-per-node N ... tzrec <subcommand> ...`: each worker runs
// this tzrec executable with the arguments after `--` and torchrun's rendezvous variables.
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "cli/commands.h"
#include "dist/launcher.h"

namespace tzrec::cli {
namespace {

// Absolute path of the running tzrec executable, so that workers run the same build.
std::string self_executable() {
  std::vector<char> buffer(PATH_MAX);
  while (true) {
    const ssize_t n = ::readlink("/proc/self/exe", buffer.data(), buffer.size());
    if (n < 0) {
      throw IoError(std::string("tzrec launch: cannot find the tzrec executable (readlink /proc/self/exe): ") +
                    std::strerror(errno));
    }
    if (static_cast<size_t>(n) < buffer.size()) return std::string(buffer.data(), static_cast<size_t>(n));
    buffer.resize(buffer.size() * 2);
  }
}

}  // namespace

Action add_launch_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "launch",
      "Start the workers of this node for distributed training (a torchrun replacement without "
      "Python): tzrec launch --nproc-per-node 2 -- train_eval --pipeline_config_path x.config");
  auto options = std::make_shared<dist::LaunchOptions>();
  auto worker_args = std::make_shared<std::vector<std::string>>();
  auto standalone = std::make_shared<bool>(false);
  cmd->add_option("--nproc-per-node,--nproc_per_node", options->nproc_per_node, "workers on this node")
      ->capture_default_str();
  cmd->add_option("--nnodes", options->nnodes, "nodes of the job (run one launcher per node)")
      ->capture_default_str();
  cmd->add_option("--node-rank,--node_rank", options->node_rank, "index of this node, from 0 to nnodes-1")
      ->capture_default_str();
  cmd->add_option("--master-addr,--master_addr", options->master_addr,
                  "address of the node with rank 0 (hosts the rendezvous store)")
      ->capture_default_str();
  cmd->add_option("--master-port,--master_port", options->master_port,
                  "port of the rendezvous store; 0 picks a free one (single node only)")
      ->capture_default_str();
  cmd->add_flag("--standalone", *standalone, "single-node job on a free port of 127.0.0.1");
  cmd->add_option("--term-grace-seconds,--term_grace_seconds", options->term_grace_seconds,
                  "after a worker fails, seconds between SIGTERM and SIGKILL of the others")
      ->capture_default_str();
  cmd->add_option("worker_command", *worker_args,
                  "after '--': the tzrec subcommand each worker runs, with its flags");
  return [options, worker_args, standalone]() {
    if (worker_args->empty()) {
      throw UsageError("tzrec launch: no worker command given: put the tzrec subcommand after '--', e.g. "
                       "`tzrec launch --nproc-per-node 2 -- train_eval --pipeline_config_path x.config`");
    }
    if ((*worker_args)[0] == "launch") {
      throw UsageError("tzrec launch: the worker command cannot be 'launch' itself: give the subcommand "
                       "each worker runs (train_eval, eval, ...)");
    }
    dist::LaunchOptions launch_options = *options;
    if (*standalone) {
      if (launch_options.nnodes != 1) {
        throw UsageError("tzrec launch: --standalone is a single-node job: drop --nnodes or --standalone");
      }
      launch_options.master_addr = "127.0.0.1";
      launch_options.master_port = 0;
    }
    launch_options.command = {self_executable()};
    launch_options.command.insert(launch_options.command.end(), worker_args->begin(), worker_args->end());
    return dist::launch(launch_options);
  };
}

}  // namespace tzrec::cli
