// The job's process group: rendezvous from torchrun's environment variables, collectives on c10d
// (ProcessGroupGloo on CPU over a TCPStore hosted by rank 0), and failure diagnosis.
//
// Every collective takes `what`, a short name of what is being exchanged ("dense gradients",
// "embedding ids"), used in error messages. A collective that fails (a peer died, or a peer did not
// join within PROCESS_GROUP_TIMEOUT_SECONDS) throws tzrec::DistributedError naming the collective,
// its sequence number, this rank, and what the other ranks were doing: each rank publishes a
// heartbeat (counter, current collective) in the store every second, so a failing rank can tell a
// dead rank (heartbeat stopped) from a stalled or diverged one (heartbeat alive, behind in the
// collective sequence). After such an error the group is unusable; the process should exit.
//
// A job without the variables (or WORLD_SIZE=1) is a single process: collectives are local and no
// socket is opened.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace tzrec::dist {

// torchrun's variables. Defaults describe a single process.
struct DistEnv {
  int rank = 0;              // RANK
  int world_size = 1;        // WORLD_SIZE
  int local_rank = 0;        // LOCAL_RANK
  int local_world_size = 1;  // LOCAL_WORLD_SIZE
  int group_rank = 0;        // GROUP_RANK (node index)
  std::string master_addr = "127.0.0.1";  // MASTER_ADDR
  int master_port = 29500;                // MASTER_PORT
  std::chrono::seconds timeout{1800};     // PROCESS_GROUP_TIMEOUT_SECONDS (TorchEasyRec default 30 min)

  bool distributed() const { return world_size > 1; }
  int num_nodes() const { return (world_size + local_world_size - 1) / local_world_size; }
};

// Reads the variables. None set → single process. WORLD_SIZE > 1 with RANK, MASTER_ADDR or
// MASTER_PORT missing, a non-numeric or out-of-range value, or LOCAL_WORLD_SIZE not dividing
// WORLD_SIZE → tzrec::ConfigError naming the variable and its value. LOCAL_RANK /
// LOCAL_WORLD_SIZE default to RANK / WORLD_SIZE (one node) when absent.
DistEnv dist_env_from_environment();

enum class ReduceOp { kSum, kMax, kMin };

// The collectives of one kind and purpose.
struct CollectiveTraffic {
  std::string kind;  // "all_reduce", "broadcast", "all_gather", "all_to_all"
  std::string what;  // the purpose the caller named, e.g. "dense gradients"
  int64_t calls = 0;
  int64_t bytes = 0;     // payload bytes this rank sent
  // Time this rank spent in them: start to completion, waiting for slower ranks included; for
  // asynchronous ones only the wait at completion (the communication not hidden behind work).
  double seconds = 0;
};

class ProcessGroup;

// A collective started without waiting (ProcessGroup::all_reduce_async). wait() completes it and
// throws DistributedError as the blocking collectives do; destroying one that was not waited
// for waits for it and only logs a failure.
class PendingCollective {
 public:
  PendingCollective();
  PendingCollective(PendingCollective&&) noexcept;
  PendingCollective& operator=(PendingCollective&& other) noexcept;
  ~PendingCollective();

  bool active() const { return state_ != nullptr; }
  void wait();

  struct State;

 private:
  friend class ProcessGroup;
  std::unique_ptr<State> state_;
};

class ProcessGroup : public std::enable_shared_from_this<ProcessGroup> {
 public:
  // Joins the job: rank 0 hosts the TCPStore at MASTER_ADDR:MASTER_PORT, every rank connects and
  // builds the Gloo group (waiting up to env.timeout for the others). Failure → DistributedError
  // saying which address/port was tried.
  static std::shared_ptr<ProcessGroup> create(const DistEnv& env);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  const DistEnv& env() const;
  int rank() const { return env().rank; }
  int world_size() const { return env().world_size; }

  // In place over `tensor` (contiguous CPU, any dtype Gloo reduces: float, double, int32/64, ...).
  void all_reduce(torch::Tensor& tensor, ReduceOp op, const std::string& what);
  // all_reduce that returns once the collective is started: `tensor` holds the result after
  // wait(); it must stay alive and untouched until then. Every rank must start its collectives in
  // the same order (asynchronous ones included). Single process: already complete.
  PendingCollective all_reduce_async(const torch::Tensor& tensor, ReduceOp op, const std::string& what);
  // In place: root's values everywhere. Shapes and dtypes must match on every rank.
  void broadcast(torch::Tensor& tensor, int root, const std::string& what);
  // Every rank's `input` (same dtype and trailing shape; dim-0 sizes may differ), in rank order.
  std::vector<torch::Tensor> all_gather(const torch::Tensor& input, const std::string& what);
  // Row exchange along dim 0: the first send_counts[0] rows of `input` go to rank 0, the next
  // send_counts[1] to rank 1, ...; returns the rows received, in source-rank order, and their counts
  // per source rank in *recv_counts. recv_counts are exchanged first unless `known_recv_counts` is
  // given (a second collective otherwise). sum(send_counts) must equal input.size(0).
  torch::Tensor all_to_all(const torch::Tensor& input, const std::vector<int64_t>& send_counts,
                           std::vector<int64_t>* recv_counts, const std::string& what,
                           const std::vector<int64_t>* known_recv_counts = nullptr);
  void barrier(const std::string& what);
  // Root's string everywhere (e.g. a sharding plan as JSON).
  std::string broadcast_string(const std::string& value, int root, const std::string& what);
  // Every rank's string, in rank order (e.g. each rank's data read position as JSON).
  std::vector<std::string> all_gather_strings(const std::string& value, const std::string& what);

  // Collectives issued so far by this rank (the sequence number of the next one).
  int64_t collective_count() const;
  // What this rank's collectives did since construction or reset_traffic(), per kind and purpose
  // (sorted by kind, then what), for the training log and the benchmark.
  std::vector<CollectiveTraffic> traffic() const;
  void reset_traffic();

  struct Impl;

 private:
  friend class PendingCollective;
  explicit ProcessGroup(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tzrec::dist
