#include "dist/process_group.h"

#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO  // this translation unit only, so the shared torch PCH stays valid
#endif
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "base/logging.h"

namespace tzrec::dist {
namespace {

constexpr auto kHeartbeatInterval = std::chrono::milliseconds(1000);
// A rank whose heartbeat counter does not move for this long is reported as stopped.
constexpr auto kHeartbeatSilence = std::chrono::milliseconds(2500);

std::string heartbeat_key(int rank) { return fmt::format("tzrec/heartbeat/{}", rank); }

const char* env_or_null(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

int64_t parse_env_int(const char* name, const char* value, int64_t lo, int64_t hi) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(value, &end, 10);
  if (errno != 0 || end == value || *end != '\0' || v < lo || v > hi) {
    throw ConfigError(fmt::format("environment variable {}={} is not an integer in [{}, {}]", name,
                                  value, lo, hi));
  }
  return v;
}

std::string first_line(const std::string& s) {
  const auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

}  // namespace

DistEnv dist_env_from_environment() {
  DistEnv env;
  const char* world = env_or_null("WORLD_SIZE");
  if (world != nullptr) env.world_size = static_cast<int>(parse_env_int("WORLD_SIZE", world, 1, 1 << 20));
  if (const char* t = env_or_null("PROCESS_GROUP_TIMEOUT_SECONDS")) {
    env.timeout = std::chrono::seconds(parse_env_int("PROCESS_GROUP_TIMEOUT_SECONDS", t, 1, 1LL << 31));
  }
  if (env.world_size == 1) return env;

  auto required = [](const char* name) {
    const char* v = env_or_null(name);
    if (v == nullptr) {
      throw ConfigError(fmt::format(
          "environment variable {} is not set but WORLD_SIZE > 1; launch with `tzrec launch "
          "--nproc-per-node N -- ...` or `torchrun --no-python ...`, which set it",
          name));
    }
    return v;
  };
  env.rank = static_cast<int>(parse_env_int("RANK", required("RANK"), 0, env.world_size - 1));
  env.master_addr = required("MASTER_ADDR");
  env.master_port = static_cast<int>(parse_env_int("MASTER_PORT", required("MASTER_PORT"), 1, 65535));
  env.local_world_size = env.world_size;
  env.local_rank = env.rank;
  if (const char* v = env_or_null("LOCAL_WORLD_SIZE")) {
    env.local_world_size = static_cast<int>(parse_env_int("LOCAL_WORLD_SIZE", v, 1, env.world_size));
    if (env.world_size % env.local_world_size != 0) {
      throw ConfigError(fmt::format(
          "environment variable LOCAL_WORLD_SIZE={} does not divide WORLD_SIZE={}; every node must run "
          "the same number of ranks",
          env.local_world_size, env.world_size));
    }
  }
  if (const char* v = env_or_null("LOCAL_RANK")) {
    env.local_rank = static_cast<int>(parse_env_int("LOCAL_RANK", v, 0, env.local_world_size - 1));
  } else {
    env.local_rank = env.rank % env.local_world_size;
  }
  if (const char* v = env_or_null("GROUP_RANK")) {
    env.group_rank = static_cast<int>(parse_env_int("GROUP_RANK", v, 0, env.num_nodes() - 1));
  } else {
    env.group_rank = env.rank / env.local_world_size;
  }
  return env;
}

struct ProcessGroup::Impl {
  DistEnv env;
  c10::intrusive_ptr<c10d::TCPStore> store;  // rank 0: server; others: client
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;

  std::atomic<int64_t> seq{0};
  std::mutex state_mu;
  std::string current;         // "all_reduce 'dense gradients'" while one runs, else ""
  int64_t current_seq = -1;    // its sequence number
  std::map<std::pair<std::string, std::string>, CollectiveTraffic> traffic;  // (kind, what) →

  // Heartbeat thread (own store client: the main thread's may be blocked in a wait).
  std::thread heartbeat;
  std::mutex hb_mu;
  std::condition_variable hb_cv;
  bool hb_stop = false;

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(hb_mu);
      hb_stop = true;
    }
    hb_cv.notify_all();
    if (heartbeat.joinable()) heartbeat.join();
  }

  c10::intrusive_ptr<c10d::TCPStore> connect_client(std::chrono::milliseconds timeout) const {
    c10d::TCPStoreOptions opts;
    opts.port = static_cast<std::uint16_t>(env.master_port);
    opts.isServer = false;
    opts.waitWorkers = false;
    opts.timeout = timeout;
    return c10::make_intrusive<c10d::TCPStore>(env.master_addr, opts);
  }

  std::string heartbeat_value(int64_t counter) {
    std::lock_guard<std::mutex> lock(state_mu);
    return fmt::format("{} {} {}", counter, current_seq, current.empty() ? "-" : current);
  }

  void publish(c10d::Store& s, int64_t counter) {
    const std::string v = heartbeat_value(counter);
    s.set(heartbeat_key(env.rank), std::vector<uint8_t>(v.begin(), v.end()));
  }

  void run_heartbeat(c10::intrusive_ptr<c10d::TCPStore> client) {
    int64_t counter = 1;
    std::unique_lock<std::mutex> lock(hb_mu);
    while (!hb_cv.wait_for(lock, kHeartbeatInterval, [this] { return hb_stop; })) {
      lock.unlock();
      try {
        publish(*client, ++counter);
      } catch (const std::exception& e) {
        // The store lives in rank 0: at the end of a job it may be gone before this rank exits.
        log::debug("rank {}: heartbeat stopped: {}", env.rank, first_line(e.what()));
        return;
      }
      lock.lock();
    }
  }

  struct Beat {
    bool present = false;
    int64_t counter = 0;
    int64_t seq = -1;
    std::string doing;
  };

  std::map<int, Beat> read_heartbeats(c10d::Store& s) const {
    std::map<int, Beat> out;
    for (int r = 0; r < env.world_size; ++r) {
      Beat b;
      if (s.check({heartbeat_key(r)})) {
        const std::vector<uint8_t> raw = s.get(heartbeat_key(r));
        std::istringstream in(std::string(raw.begin(), raw.end()));
        in >> b.counter >> b.seq;
        std::getline(in >> std::ws, b.doing);
        b.present = true;
      }
      out[r] = b;
    }
    return out;
  }

  static std::string describe(const Beat& b) {
    if (b.doing != "-") return fmt::format("in collective #{} {}", b.seq, b.doing);
    if (b.seq < 0) return "before its first collective";
    return fmt::format("between collectives, after #{}", b.seq);
  }

  // What the other ranks were doing when collective #s failed on this rank.
  std::string diagnose(int64_t s) const {
    try {
      auto client = connect_client(std::chrono::milliseconds(5000));
      const auto first = read_heartbeats(*client);
      std::this_thread::sleep_for(kHeartbeatSilence);
      const auto second = read_heartbeats(*client);
      std::vector<std::string> findings;
      for (int r = 0; r < env.world_size; ++r) {
        if (r == env.rank) continue;
        const Beat& a = first.at(r);
        const Beat& b = second.at(r);
        if (!b.present) {
          findings.push_back(fmt::format("rank {} never published a heartbeat (it did not start or died "
                                         "before joining)", r));
        } else if (a.counter == b.counter) {
          findings.push_back(fmt::format(
              "rank {} stopped responding (no heartbeat for {:.1f} s: the process died, was killed or "
              "is frozen; last seen {})",
              r, kHeartbeatSilence.count() / 1000.0,
              describe(b)));
        } else if (b.doing == "-" || b.seq != s) {
          findings.push_back(fmt::format(
              "rank {} is alive but not in this collective ({}): the ranks diverged or it is stalled",
              r, describe(b)));
        }
      }
      if (findings.empty()) return "every other rank is alive and in the same collective";
      std::string out;
      for (const std::string& f : findings) out += (out.empty() ? "" : "; ") + f;
      return out;
    } catch (const std::exception& e) {
      return fmt::format(
          "the rendezvous store on rank 0 ({}:{}) is unreachable, so rank 0 has exited or died ({})",
          env.master_addr, env.master_port, first_line(e.what()));
    }
  }

  // A started collective.
  struct Launched {
    int64_t seq = -1;
    std::string kind, what;
    int64_t bytes = 0;
    c10::intrusive_ptr<c10d::Work> work;
    std::chrono::steady_clock::time_point started;
  };

  [[noreturn]] void fail(const Launched& l, const std::exception& e) const {
    throw DistributedError(fmt::format(
        "rank {}: collective #{} {} of {} failed: {}; {}. Check the other ranks' logs; set "
        "PROCESS_GROUP_TIMEOUT_SECONDS (now {} s) if a rank legitimately needs longer",
        env.rank, l.seq, l.kind, l.what, first_line(e.what()), diagnose(l.seq), env.timeout.count()));
  }

  template <typename Start>
  Launched launch(const char* kind, const std::string& what, int64_t bytes, Start&& start) {
    Launched l;
    l.seq = seq++;
    l.kind = kind;
    l.what = what;
    l.bytes = bytes;
    l.started = std::chrono::steady_clock::now();
    try {
      l.work = start();
    } catch (const std::exception& e) {
      fail(l, e);
    }
    return l;
  }

  // Waits for `l` (named as this rank's current collective meanwhile) and counts its traffic, with
  // the time since `waited_from`.
  void complete(const Launched& l, std::chrono::steady_clock::time_point waited_from) {
    {
      std::lock_guard<std::mutex> lock(state_mu);
      current = fmt::format("{} '{}'", l.kind, l.what);
      current_seq = l.seq;
    }
    try {
      l.work->wait();
    } catch (const std::exception& e) {
      fail(l, e);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - waited_from).count();
    std::lock_guard<std::mutex> lock(state_mu);
    current.clear();
    record(l.kind, l.what, l.bytes, seconds);
  }

  template <typename Start>
  void run(const char* kind, const std::string& what, int64_t bytes, Start&& start) {
    const Launched l = launch(kind, what, bytes, std::forward<Start>(start));
    complete(l, l.started);
  }

  // Under state_mu.
  void record(const std::string& kind, const std::string& what, int64_t bytes, double seconds) {
    CollectiveTraffic& t = traffic[{kind, what}];
    t.kind = kind;
    t.what = what;
    ++t.calls;
    t.bytes += bytes;
    t.seconds += seconds;
  }
};

std::shared_ptr<ProcessGroup> ProcessGroup::create(const DistEnv& env) {
  auto impl = std::make_unique<Impl>();
  impl->env = env;
  if (!env.distributed()) return std::shared_ptr<ProcessGroup>(new ProcessGroup(std::move(impl)));

  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(env.timeout);
  try {
    c10d::TCPStoreOptions opts;
    opts.port = static_cast<std::uint16_t>(env.master_port);
    opts.isServer = env.rank == 0;
    opts.numWorkers = static_cast<std::size_t>(env.world_size);
    opts.waitWorkers = false;
    opts.timeout = timeout;
    impl->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, opts);

    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    const char* ifname = env_or_null("GLOO_SOCKET_IFNAME");
    if (ifname != nullptr) {
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
    } else if (env.master_addr == "localhost" || env.master_addr.rfind("127.", 0) == 0) {
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    } else {
      options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    }
    options->threads = 2;
    auto prefixed = c10::make_intrusive<c10d::PrefixStore>("gloo", impl->store);
    impl->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, env.rank, env.world_size, options);
  } catch (const std::exception& e) {
    throw DistributedError(fmt::format(
        "rank {} of {}: could not join the process group at MASTER_ADDR={} MASTER_PORT={} within {} s: {}. "
        "Check that every rank was started with the same MASTER_ADDR/MASTER_PORT and that the port is "
        "free on rank 0's host",
        env.rank, env.world_size, env.master_addr, env.master_port, env.timeout.count(),
        first_line(e.what())));
  }
  Impl* raw = impl.get();
  auto hb_client = raw->connect_client(timeout);
  raw->publish(*hb_client, 1);
  raw->heartbeat = std::thread([raw, hb_client] { raw->run_heartbeat(hb_client); });
  return std::shared_ptr<ProcessGroup>(new ProcessGroup(std::move(impl)));
}

ProcessGroup::ProcessGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ProcessGroup::~ProcessGroup() = default;

const DistEnv& ProcessGroup::env() const { return impl_->env; }

int64_t ProcessGroup::collective_count() const { return impl_->seq.load(); }

std::vector<CollectiveTraffic> ProcessGroup::traffic() const {
  std::lock_guard<std::mutex> lock(impl_->state_mu);
  std::vector<CollectiveTraffic> out;
  out.reserve(impl_->traffic.size());
  for (const auto& [key, t] : impl_->traffic) out.push_back(t);
  return out;
}

void ProcessGroup::reset_traffic() {
  std::lock_guard<std::mutex> lock(impl_->state_mu);
  impl_->traffic.clear();
}

namespace {

int64_t nbytes(const torch::Tensor& t) { return t.numel() * static_cast<int64_t>(t.element_size()); }

void check_cpu_contiguous(const torch::Tensor& t, const std::string& what) {
  TORCH_CHECK(t.defined() && t.device().is_cpu() && t.is_contiguous(), "collective of ", what,
              ": tensor must be a contiguous CPU tensor");
}

c10d::AllreduceOptions allreduce_options(ReduceOp op) {
  c10d::AllreduceOptions opts;
  opts.reduceOp = op == ReduceOp::kSum   ? c10d::ReduceOp::SUM
                  : op == ReduceOp::kMax ? c10d::ReduceOp::MAX
                                         : c10d::ReduceOp::MIN;
  return opts;
}

}  // namespace

void ProcessGroup::all_reduce(torch::Tensor& tensor, ReduceOp op, const std::string& what) {
  check_cpu_contiguous(tensor, what);
  if (!impl_->env.distributed()) return;
  std::vector<at::Tensor> tensors = {tensor};
  impl_->run("all_reduce", what, nbytes(tensor),
             [&] { return impl_->gloo->allreduce(tensors, allreduce_options(op)); });
}

struct PendingCollective::State {
  std::shared_ptr<ProcessGroup> pg;  // keeps the group alive until the wait
  ProcessGroup::Impl::Launched launched;
  std::vector<at::Tensor> tensors;
};

PendingCollective ProcessGroup::all_reduce_async(const torch::Tensor& tensor, ReduceOp op, const std::string& what) {
  check_cpu_contiguous(tensor, what);
  PendingCollective pending;
  if (!impl_->env.distributed()) return pending;
  auto state = std::make_unique<PendingCollective::State>();
  state->pg = shared_from_this();
  state->tensors = {tensor};
  state->launched = impl_->launch("all_reduce", what, nbytes(tensor),
                                  [&] { return impl_->gloo->allreduce(state->tensors, allreduce_options(op)); });
  pending.state_ = std::move(state);
  return pending;
}

void PendingCollective::wait() {
  if (!state_) return;
  std::unique_ptr<State> state = std::move(state_);
  state->pg->impl_->complete(state->launched, std::chrono::steady_clock::now());
}

PendingCollective::PendingCollective() = default;
PendingCollective::PendingCollective(PendingCollective&&) noexcept = default;

PendingCollective& PendingCollective::operator=(PendingCollective&& other) noexcept {
  if (this != &other) {
    PendingCollective previous(std::move(*this));  // waited for when it goes out of scope
    state_ = std::move(other.state_);
  }
  return *this;
}

PendingCollective::~PendingCollective() {
  if (!state_) return;
  try {
    wait();
  } catch (const std::exception& e) {
    log::warning("a collective nobody waited for failed: {}", first_line(e.what()));
  }
}

void ProcessGroup::broadcast(torch::Tensor& tensor, int root, const std::string& what) {
  check_cpu_contiguous(tensor, what);
  TORCH_CHECK(root >= 0 && root < world_size(), "broadcast root out of range");
  if (!impl_->env.distributed()) return;
  c10d::BroadcastOptions opts;
  opts.rootRank = root;
  std::vector<at::Tensor> tensors = {tensor};
  impl_->run("broadcast", what, rank() == root ? nbytes(tensor) : 0,
             [&] { return impl_->gloo->broadcast(tensors, opts); });
}

std::vector<torch::Tensor> ProcessGroup::all_gather(const torch::Tensor& input, const std::string& what) {
  check_cpu_contiguous(input, what);
  TORCH_CHECK(input.dim() >= 1, "all_gather of ", what, ": tensor must have at least one dimension");
  if (!impl_->env.distributed()) return {input.clone()};
  const int w = world_size();
  // Rows per rank first, then every rank's block padded to the largest.
  torch::Tensor rows = torch::tensor({input.size(0)}, torch::kInt64);
  std::vector<std::vector<at::Tensor>> row_out(1);
  for (int r = 0; r < w; ++r) row_out[0].push_back(torch::empty({1}, torch::kInt64));
  std::vector<at::Tensor> row_in = {rows};
  impl_->run("all_gather", what + " (row counts)", 8, [&] { return impl_->gloo->allgather(row_out, row_in); });
  int64_t max_rows = 0;
  std::vector<int64_t> counts(w);
  for (int r = 0; r < w; ++r) {
    counts[r] = row_out[0][r].item<int64_t>();
    max_rows = std::max(max_rows, counts[r]);
  }
  std::vector<int64_t> shape = input.sizes().vec();
  shape[0] = max_rows;
  torch::Tensor padded = input;
  if (input.size(0) != max_rows) {
    padded = torch::zeros(shape, input.options());
    padded.narrow(0, 0, input.size(0)).copy_(input);
  }
  std::vector<std::vector<at::Tensor>> out(1);
  for (int r = 0; r < w; ++r) out[0].push_back(torch::empty(shape, input.options()));
  std::vector<at::Tensor> in = {padded};
  impl_->run("all_gather", what, nbytes(input), [&] { return impl_->gloo->allgather(out, in); });
  std::vector<torch::Tensor> result;
  for (int r = 0; r < w; ++r) result.push_back(out[0][r].narrow(0, 0, counts[r]));
  return result;
}

torch::Tensor ProcessGroup::all_to_all(const torch::Tensor& input, const std::vector<int64_t>& send_counts,
                                       std::vector<int64_t>* recv_counts, const std::string& what,
                                       const std::vector<int64_t>* known_recv_counts) {
  check_cpu_contiguous(input, what);
  const int w = world_size();
  TORCH_CHECK(static_cast<int>(send_counts.size()) == w, "all_to_all of ", what, ": ", send_counts.size(),
              " send counts for world size ", w);
  int64_t total = 0;
  for (int64_t c : send_counts) total += c;
  TORCH_CHECK(input.dim() >= 1 && total == input.size(0), "all_to_all of ", what, ": send counts sum to ",
              total, " but the input has ", input.dim() >= 1 ? input.size(0) : 0, " rows");
  if (!impl_->env.distributed()) {
    if (recv_counts != nullptr) *recv_counts = send_counts;
    return input;
  }
  std::vector<int64_t> recv;
  if (known_recv_counts != nullptr) {
    recv = *known_recv_counts;
    TORCH_CHECK(static_cast<int>(recv.size()) == w, "all_to_all of ", what, ": bad receive counts");
  } else {
    torch::Tensor send_t = torch::tensor(send_counts, torch::kInt64);
    torch::Tensor recv_t = torch::empty({w}, torch::kInt64);
    std::vector<int64_t> ones(w, 1);
    std::vector<int64_t> ones2 = ones;
    impl_->run("all_to_all", what + " (row counts)", 8 * (w - 1),
               [&] { return impl_->gloo->alltoall_base(recv_t, send_t, ones, ones2); });
    recv.assign(recv_t.data_ptr<int64_t>(), recv_t.data_ptr<int64_t>() + w);
  }
  int64_t recv_total = 0;
  for (int64_t c : recv) recv_total += c;
  std::vector<int64_t> shape = input.sizes().vec();
  shape[0] = recv_total;
  torch::Tensor output = torch::empty(shape, input.options());
  int64_t row_bytes = static_cast<int64_t>(input.element_size());
  for (int64_t d = 1; d < input.dim(); ++d) row_bytes *= input.size(d);
  const int64_t sent = (total - send_counts[rank()]) * row_bytes;
  std::vector<int64_t> out_counts = recv;
  std::vector<int64_t> in_counts = send_counts;
  torch::Tensor in = input;
  impl_->run("all_to_all", what, sent,
             [&] { return impl_->gloo->alltoall_base(output, in, out_counts, in_counts); });
  if (recv_counts != nullptr) *recv_counts = std::move(recv);
  return output;
}

void ProcessGroup::barrier(const std::string& what) {
  if (!impl_->env.distributed()) return;
  // A one-element all_reduce: same failure diagnosis as every other collective.
  torch::Tensor t = torch::zeros({1}, torch::kInt32);
  all_reduce(t, ReduceOp::kSum, what);
}

std::string ProcessGroup::broadcast_string(const std::string& value, int root, const std::string& what) {
  if (!impl_->env.distributed()) return value;
  torch::Tensor size = torch::tensor({static_cast<int64_t>(value.size())}, torch::kInt64);
  broadcast(size, root, what + " (size)");
  torch::Tensor bytes = torch::empty({size.item<int64_t>()}, torch::kUInt8);
  if (rank() == root) std::memcpy(bytes.data_ptr<uint8_t>(), value.data(), value.size());
  broadcast(bytes, root, what);
  return std::string(reinterpret_cast<const char*>(bytes.data_ptr<uint8_t>()), bytes.numel());
}

std::vector<std::string> ProcessGroup::all_gather_strings(const std::string& value, const std::string& what) {
  // One trailing byte more than the string, so that no rank sends an empty block.
  torch::Tensor bytes = torch::zeros({static_cast<int64_t>(value.size()) + 1}, torch::kUInt8);
  if (!value.empty()) std::memcpy(bytes.data_ptr<uint8_t>(), value.data(), value.size());
  std::vector<std::string> out;
  for (const torch::Tensor& t : all_gather(bytes, what)) {
    out.emplace_back(reinterpret_cast<const char*>(t.data_ptr<uint8_t>()), static_cast<size_t>(t.numel() - 1));
  }
  return out;
}

}  // namespace tzrec::dist
