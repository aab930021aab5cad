// demand_paged_zeros: zero-filled tensors the OS backs only where they are written. Expected
// values: zeros by definition; memory from the process's VmRSS (/proc/self/status), with slack
// for huge-page rounding (2 MiB) and the test's own allocations.
#include "embedding/demand_paged_tensor.h"

#include <gtest/gtest.h>

#include "embedding/testing_memory.h"

namespace tzrec::embedding {
namespace demand_paged_tensor_test {

using testing::resident_mib;

TEST(DemandPagedZeros, MemoryFollowsTheWrittenRowsOnly) {
  const double before = resident_mib();
  torch::Tensor t = demand_paged_zeros({8 * 1024 * 1024, 16}, torch::kFloat32);  // 512 MiB
  ASSERT_EQ(t.sizes(), (std::vector<int64_t>{8 * 1024 * 1024, 16}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_LT(resident_mib() - before, 16.0);
  EXPECT_EQ(t.abs().max().item<float>(), 0.0f);  // reading every page backs none of them
  EXPECT_LT(resident_mib() - before, 64.0);
  t.slice(0, 0, 1024 * 1024).fill_(1.5f);  // the first 64 MiB
  const double written = resident_mib() - before;
  EXPECT_GT(written, 60.0);
  EXPECT_LT(written, 64.0 + 24.0);
  EXPECT_EQ(t.sum().item<double>(), 1.5 * 1024 * 1024 * 16);
  t = torch::Tensor();  // unmapped
  EXPECT_LT(resident_mib() - before, 24.0);
}

TEST(DemandPagedZeros, ReleasedPagesReadZerosAndTakeNoMemory) {
  const double before = resident_mib();
  torch::Tensor t = demand_paged_zeros({64 * 1024 * 1024 + 7}, torch::kUInt8);  // 64 MiB and a partial page
  t.fill_(3);
  EXPECT_GT(resident_mib() - before, 60.0);
  release_pages(t);
  EXPECT_LT(resident_mib() - before, 8.0);
  EXPECT_EQ(t.count_nonzero().item<int64_t>(), 0);
  t.narrow(0, 0, 10).fill_(1);  // writable again
  EXPECT_EQ(t.sum().item<int64_t>(), 10);
  // Ordinary tensors, large and small, and a view: zeros, and nothing outside them touched.
  torch::Tensor heap = torch::ones({3 << 20}, torch::kFloat32);
  torch::Tensor head = heap.narrow(0, 0, 1000), tail = heap.narrow(0, 1000, (3 << 20) - 1000);
  torch::Tensor small = torch::ones({100}, torch::kInt64);
  release_pages(small);
  EXPECT_EQ(small.count_nonzero().item<int64_t>(), 0);
  torch::Tensor strided = heap.view({-1, 2}).select(1, 0);
  release_pages(strided);
  EXPECT_EQ(heap.sum().item<double>(), 0.5 * (3 << 20));  // every other element zeroed
  release_pages(tail);
  EXPECT_EQ(heap.count_nonzero().item<int64_t>(), 500);  // head's odd elements
  EXPECT_EQ(head.count_nonzero().item<int64_t>(), 500);
}

TEST(DemandPagedZeros, EveryDtypeAndSmallTensorsAreZeros) {
  for (auto dtype : {torch::kFloat32, torch::kFloat16, torch::kInt64, torch::kUInt8}) {
    for (int64_t n : {int64_t{0}, int64_t{10}, int64_t{3 << 20}}) {
      torch::Tensor t = demand_paged_zeros({n}, dtype);
      EXPECT_EQ(t.scalar_type(), dtype);
      EXPECT_EQ(t.numel(), n);
      EXPECT_EQ(t.count_nonzero().item<int64_t>(), 0) << n;
    }
  }
}

}  // namespace demand_paged_tensor_test
}  // namespace tzrec::embedding
