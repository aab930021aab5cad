#include "dist/process_group.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include <gtest/gtest.h>

#include "base/error.h"
#include "dist/testing_multiprocess.h"

namespace tzrec::dist {
namespace process_group_test {

using testing::expect_all_succeeded;
using testing::run_ranks;

// Sets variables for one test and restores the previous values.
class ScopedEnv {
 public:
  explicit ScopedEnv(std::vector<std::pair<std::string, std::string>> vars) {
    for (const auto& [k, v] : vars) {
      const char* old = std::getenv(k.c_str());
      saved_.push_back({k, old != nullptr ? std::optional<std::string>(old) : std::nullopt});
      if (v.empty()) {
        ::unsetenv(k.c_str());
      } else {
        ::setenv(k.c_str(), v.c_str(), 1);
      }
    }
  }
  ~ScopedEnv() {
    for (const auto& [k, v] : saved_) {
      if (v) {
        ::setenv(k.c_str(), v->c_str(), 1);
      } else {
        ::unsetenv(k.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

const std::vector<std::string> kVars = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
                                        "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT",
                                        "PROCESS_GROUP_TIMEOUT_SECONDS"};

std::vector<std::pair<std::string, std::string>> env_of(
    std::vector<std::pair<std::string, std::string>> set) {
  std::vector<std::pair<std::string, std::string>> all;
  for (const std::string& k : kVars) {
    std::string v;
    for (const auto& [sk, sv] : set) {
      if (sk == k) v = sv;
    }
    all.push_back({k, v});
  }
  return all;
}

TEST(DistEnv, NoVariablesMeansSingleProcess) {
  if (testing::is_rank_worker()) return;
  ScopedEnv env(env_of({}));
  DistEnv e = dist_env_from_environment();
  EXPECT_EQ(e.world_size, 1);
  EXPECT_EQ(e.rank, 0);
  EXPECT_FALSE(e.distributed());
  EXPECT_EQ(e.timeout.count(), 1800);
}

TEST(DistEnv, ReadsTorchrunVariables) {
  if (testing::is_rank_worker()) return;
  ScopedEnv env(env_of({{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"},
                        {"LOCAL_WORLD_SIZE", "4"}, {"GROUP_RANK", "1"}, {"MASTER_ADDR", "10.0.0.2"},
                        {"MASTER_PORT", "23456"}, {"PROCESS_GROUP_TIMEOUT_SECONDS", "90"}}));
  DistEnv e = dist_env_from_environment();
  EXPECT_EQ(e.rank, 5);
  EXPECT_EQ(e.world_size, 8);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_world_size, 4);
  EXPECT_EQ(e.group_rank, 1);
  EXPECT_EQ(e.num_nodes(), 2);
  EXPECT_EQ(e.master_addr, "10.0.0.2");
  EXPECT_EQ(e.master_port, 23456);
  EXPECT_EQ(e.timeout.count(), 90);
}

TEST(DistEnv, LocalVariablesDefaultToOneNode) {
  if (testing::is_rank_worker()) return;
  ScopedEnv env(env_of({{"RANK", "2"}, {"WORLD_SIZE", "3"}, {"MASTER_ADDR", "127.0.0.1"},
                        {"MASTER_PORT", "29500"}}));
  DistEnv e = dist_env_from_environment();
  EXPECT_EQ(e.local_rank, 2);
  EXPECT_EQ(e.local_world_size, 3);
  EXPECT_EQ(e.group_rank, 0);
}

void expect_env_error(std::vector<std::pair<std::string, std::string>> vars, const std::string& needle) {
  ScopedEnv env(env_of(std::move(vars)));
  try {
    dist_env_from_environment();
    ADD_FAILURE() << "expected ConfigError containing " << needle;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(DistEnv, BadVariablesNameTheVariable) {
  if (testing::is_rank_worker()) return;
  expect_env_error({{"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "1"}}, "RANK is not set");
  expect_env_error({{"WORLD_SIZE", "2"}, {"RANK", "0"}, {"MASTER_PORT", "1"}}, "MASTER_ADDR is not set");
  expect_env_error({{"WORLD_SIZE", "2"}, {"RANK", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "1"}},
                   "RANK=2 is not an integer in [0, 1]");
  expect_env_error({{"WORLD_SIZE", "two"}}, "WORLD_SIZE=two");
  expect_env_error({{"WORLD_SIZE", "2"}, {"RANK", "0"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "70000"}},
                   "MASTER_PORT=70000");
  expect_env_error({{"WORLD_SIZE", "4"}, {"RANK", "0"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "1"},
                    {"LOCAL_WORLD_SIZE", "3"}},
                   "LOCAL_WORLD_SIZE=3 does not divide WORLD_SIZE=4");
  expect_env_error({{"PROCESS_GROUP_TIMEOUT_SECONDS", "0"}}, "PROCESS_GROUP_TIMEOUT_SECONDS=0");
}

TEST(ProcessGroup, SingleProcessCollectivesAreLocal) {
  if (testing::is_rank_worker()) return;
  auto pg = ProcessGroup::create(DistEnv{});
  torch::Tensor t = torch::tensor({1.5, 2.5});
  pg->all_reduce(t, ReduceOp::kSum, "x");
  EXPECT_TRUE(torch::equal(t, torch::tensor({1.5, 2.5})));
  auto gathered = pg->all_gather(t, "x");
  ASSERT_EQ(gathered.size(), 1u);
  EXPECT_TRUE(torch::equal(gathered[0], t));
  std::vector<int64_t> recv;
  torch::Tensor rows = torch::arange(6).reshape({3, 2});
  EXPECT_TRUE(torch::equal(pg->all_to_all(rows, {3}, &recv, "x"), rows));
  EXPECT_EQ(recv, std::vector<int64_t>({3}));
  EXPECT_EQ(pg->broadcast_string("plan", 0, "x"), "plan");
  EXPECT_EQ(pg->all_gather_strings("pos", "x"), std::vector<std::string>{"pos"});
  pg->barrier("x");
  EXPECT_EQ(pg->collective_count(), 0);
}

TEST(ProcessGroup, CollectivesAcrossThreeRanks) {
  auto statuses = run_ranks(3, [](ProcessGroup& pg) {
    const int r = pg.rank();
    ASSERT_EQ(pg.world_size(), 3);
    // all_reduce: sum, max, min of rank-dependent values (float and int64).
    torch::Tensor f = torch::tensor({1.0f * r, 10.0f + r});
    pg.all_reduce(f, ReduceOp::kSum, "floats");
    EXPECT_TRUE(torch::equal(f, torch::tensor({3.0f, 33.0f})));
    torch::Tensor i = torch::tensor({static_cast<int64_t>(r), static_cast<int64_t>(-r)});
    pg.all_reduce(i, ReduceOp::kMax, "ints");
    EXPECT_TRUE(torch::equal(i, torch::tensor({int64_t{2}, int64_t{0}})));
    torch::Tensor m = torch::tensor({static_cast<int64_t>(r + 4)});
    pg.all_reduce(m, ReduceOp::kMin, "min");
    EXPECT_EQ(m.item<int64_t>(), 4);

    // broadcast from rank 1.
    torch::Tensor b = torch::full({2, 2}, static_cast<double>(r));
    pg.broadcast(b, 1, "block");
    EXPECT_TRUE(torch::equal(b, torch::full({2, 2}, 1.0, torch::kFloat64)));

    // all_gather with a different number of rows per rank: rank r has r + 1 rows of [r, r].
    torch::Tensor mine = torch::full({r + 1, 2}, static_cast<int64_t>(r), torch::kInt64);
    auto all = pg.all_gather(mine, "rows");
    ASSERT_EQ(all.size(), 3u);
    for (int s = 0; s < 3; ++s) {
      EXPECT_TRUE(torch::equal(all[s], torch::full({s + 1, 2}, static_cast<int64_t>(s), torch::kInt64)))
          << "from rank " << s;
    }

    // all_to_all: rank r sends (d + 1) rows to rank d, each row [r, d, k].
    std::vector<torch::Tensor> blocks;
    std::vector<int64_t> send;
    for (int d = 0; d < 3; ++d) {
      torch::Tensor blk = torch::empty({d + 1, 3}, torch::kFloat32);
      for (int k = 0; k <= d; ++k) {
        blk[k][0] = r;
        blk[k][1] = d;
        blk[k][2] = k;
      }
      blocks.push_back(blk);
      send.push_back(d + 1);
    }
    std::vector<int64_t> recv;
    torch::Tensor got = pg.all_to_all(torch::cat(blocks), send, &recv, "rows");
    EXPECT_EQ(recv, std::vector<int64_t>({r + 1, r + 1, r + 1}));
    ASSERT_EQ(got.size(0), 3 * (r + 1));
    for (int s = 0; s < 3; ++s) {
      for (int k = 0; k <= r; ++k) {
        torch::Tensor row = got[s * (r + 1) + k];
        EXPECT_EQ(row[0].item<float>(), s);
        EXPECT_EQ(row[1].item<float>(), r);
        EXPECT_EQ(row[2].item<float>(), k);
      }
    }
    // Known receive counts skip the count exchange; empty blocks are fine.
    const int64_t before = pg.collective_count();
    std::vector<int64_t> zero(3, 0);
    torch::Tensor none = pg.all_to_all(torch::empty({0, 4}), zero, nullptr, "nothing", &zero);
    EXPECT_EQ(none.size(0), 0);
    EXPECT_EQ(none.size(1), 4);
    EXPECT_EQ(pg.collective_count(), before + 1);

    EXPECT_EQ(pg.broadcast_string(r == 2 ? "from two" : "", 2, "text"), "from two");
    EXPECT_EQ(pg.all_gather_strings(std::string(static_cast<size_t>(r), 'x'), "strings"),
              (std::vector<std::string>{"", "x", "xx"}));
    pg.barrier("end");

    // Traffic: the float all_to_all sent (6 - (r + 1)) rows of 3 floats to other ranks, after
    // exchanging its row counts (8 bytes to each peer).
    int64_t a2a = 0, counts = 0, calls = 0;
    for (const CollectiveTraffic& t : pg.traffic()) {
      EXPECT_GE(t.seconds, 0.0);
      if (t.kind != "all_to_all") continue;
      calls += t.calls;
      (t.what.find("(row counts)") != std::string::npos ? counts : a2a) += t.bytes;
    }
    EXPECT_EQ(counts, 8 * 2);  // "rows" exchanged its counts, "nothing" had them
    EXPECT_EQ(calls, 1 + 2);
    EXPECT_EQ(a2a, (6 - (r + 1)) * 3 * 4);
    const auto traffic = pg.traffic();
    EXPECT_TRUE(std::any_of(traffic.begin(), traffic.end(), [](const CollectiveTraffic& t) {
      return t.kind == "all_to_all" && t.what == "rows" && t.calls == 1;
    }));
  });
  expect_all_succeeded(statuses);
}

// A rank that dies makes the others fail quickly with a message naming it.
TEST(ProcessGroup, DeadRankIsNamed) {
  auto statuses = run_ranks(3, [](ProcessGroup& pg) {
    torch::Tensor t = torch::ones({4});
    pg.all_reduce(t, ReduceOp::kSum, "warm-up");
    if (pg.rank() == 2) _exit(7);
    const auto start = std::chrono::steady_clock::now();
    try {
      for (int k = 0; k < 3; ++k) pg.all_reduce(t, ReduceOp::kSum, "dense gradients");
      ADD_FAILURE() << "the collective should fail";
    } catch (const DistributedError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("all_reduce of dense gradients failed"), std::string::npos) << msg;
      EXPECT_NE(msg.find("rank 2 stopped responding"), std::string::npos) << msg;
      std::fprintf(stderr, "rank %d: %s\n", pg.rank(), msg.c_str());
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  });
  testing::expect_exit_codes(statuses, {0, 0, 7});
}

// A rank that stalls past PROCESS_GROUP_TIMEOUT_SECONDS: the others time out naming it.
TEST(ProcessGroup, StalledRankTimesOut) {
  testing::RankOptions options;
  options.env = {{"PROCESS_GROUP_TIMEOUT_SECONDS", "2"}};
  auto statuses = run_ranks(2, [](ProcessGroup& pg) {
    torch::Tensor t = torch::ones({4});
    pg.all_reduce(t, ReduceOp::kSum, "warm-up");
    if (pg.rank() == 1) {
      std::this_thread::sleep_for(std::chrono::seconds(8));  // the stall under test
      _exit(0);
    }
    try {
      pg.all_reduce(t, ReduceOp::kSum, "metrics");
      ADD_FAILURE() << "the collective should time out";
    } catch (const DistributedError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("all_reduce of metrics failed"), std::string::npos) << msg;
      EXPECT_NE(msg.find("rank 1 is alive but not in this collective"), std::string::npos) << msg;
      EXPECT_NE(msg.find("PROCESS_GROUP_TIMEOUT_SECONDS (now 2 s)"), std::string::npos) << msg;
    }
  }, options);
  expect_all_succeeded(statuses);
}

}  // namespace process_group_test
}  // namespace tzrec::dist
