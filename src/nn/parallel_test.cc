// nn/parallel.h: parallel loops that run on several threads of torch's intra-op pool (this build
// compiles the torch layers with OpenMP; without it at::parallel_for runs serially), carry the
// caller's grad mode into the loop body, and hand chunks to slots in a fixed order.
#include "nn/parallel.h"

#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace tzrec::nn {
namespace parallel_test {

// Sets torch's thread count for one test, restoring it after.
class Threads {
 public:
  explicit Threads(int n) : before_(at::get_num_threads()) { at::set_num_threads(n); }
  ~Threads() { at::set_num_threads(before_); }

 private:
  int before_;
};

TEST(Parallel, RunsOnSeveralThreadsOfThePool) {
  Threads threads(2);
  std::mutex mu;
  std::set<std::thread::id> ids;
  std::set<int> thread_nums;
  // Each part waits (a bounded spin) for the other to start: on one thread the second part never
  // starts while the first waits, and the assertions below fail.
  std::atomic<int> started{0};
  parallel_for(0, 2, 1, [&](int64_t begin, int64_t end) {
    ++started;
    for (int spin = 0; started.load() < 2 && spin < 200000000; ++spin) {
    }
    std::lock_guard<std::mutex> lock(mu);
    ids.insert(std::this_thread::get_id());
    thread_nums.insert(at::get_thread_num());
    EXPECT_EQ(end - begin, 1);
  });
  EXPECT_EQ(started.load(), 2);
  EXPECT_EQ(ids.size(), 2u) << "the loop ran on one thread: the torch layers are built without OpenMP";
  EXPECT_EQ(thread_nums, (std::set<int>{0, 1}));
}

TEST(Parallel, CarriesTheCallersGradMode) {
  Threads threads(2);
  // An out= op on a tensor that requires grad throws while grad mode is on; under the caller's
  // NoGradGuard (as inside a custom autograd Function's forward) it must not, on any thread.
  const torch::Tensor x = torch::ones({4, 3}).requires_grad_(true);
  const torch::Tensor w = torch::ones({3, 2}).requires_grad_(true);
  torch::Tensor out = torch::empty({4, 2});
  torch::NoGradGuard no_grad;
  std::atomic<int> parts{0};
  EXPECT_NO_THROW(parallel_for(0, 4, 1, [&](int64_t begin, int64_t end) {
    ++parts;
    torch::Tensor rows = out.narrow(0, begin, end - begin);
    at::mm_out(rows, x.narrow(0, begin, end - begin), w);
  }));
  EXPECT_GE(parts.load(), 2);
  EXPECT_TRUE(torch::equal(out, torch::full({4, 2}, 3.0)));  // each entry: 3 products 1 · 1
}

TEST(Parallel, ChunksGoToSlotsInAFixedOrder) {
  Threads threads(2);
  std::vector<std::vector<int64_t>> order(2);
  parallel_chunks(7, [&](int64_t chunk, int64_t slot) { order[static_cast<size_t>(slot)].push_back(chunk); });
  // Slot s runs chunks s, s + 2, ... in order (hand-written from the rule in nn/parallel.h).
  EXPECT_EQ(order[0], (std::vector<int64_t>{0, 2, 4, 6}));
  EXPECT_EQ(order[1], (std::vector<int64_t>{1, 3, 5}));
}

TEST(Parallel, FewerChunksThanThreadsUseOneSlotEach) {
  Threads threads(2);
  std::vector<int64_t> slots;
  parallel_chunks(1, [&](int64_t chunk, int64_t slot) { slots.push_back(slot * 10 + chunk); });
  EXPECT_EQ(slots, (std::vector<int64_t>{0}));
}

}  // namespace parallel_test
}  // namespace tzrec::nn
