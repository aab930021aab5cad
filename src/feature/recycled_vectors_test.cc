#include "feature/recycled_vectors.h"

#include <gtest/gtest.h>

namespace tzrec::feature {
namespace recycled_vectors_test {

TEST(RecycledVectors, AFreedTensorsVectorIsTakenAgain) {
  auto pool = RecycledVectors<int64_t>::create(/*max_kept=*/1);
  EXPECT_EQ(pool->take().capacity(), 0u);  // nothing given back yet
  std::vector<int64_t> v = {1, 2, 3};
  v.reserve(1000);
  const int64_t* data = v.data();
  {
    torch::Tensor t = pool->to_tensor(std::move(v), torch::kInt64);
    EXPECT_EQ(t.data_ptr<int64_t>(), data);  // no copy
    EXPECT_EQ(t.numel(), 3);
    EXPECT_EQ(t[2].item<int64_t>(), 3);
    EXPECT_EQ(pool->take().capacity(), 0u);  // still held by the tensor
  }
  std::vector<int64_t> again = pool->take();
  EXPECT_TRUE(again.empty());
  EXPECT_EQ(again.data(), data);
  EXPECT_GE(again.capacity(), 1000u);
}

TEST(RecycledVectors, KeepsAtMostMaxKept) {
  auto pool = RecycledVectors<float>::create(/*max_kept=*/1);
  torch::Tensor a = pool->to_tensor(std::vector<float>(10, 1.0f), torch::kFloat32);
  torch::Tensor b = pool->to_tensor(std::vector<float>(20, 2.0f), torch::kFloat32);
  a = torch::Tensor();
  b = torch::Tensor();  // the pool is full: freed
  EXPECT_EQ(pool->take().capacity(), 10u);
  EXPECT_EQ(pool->take().capacity(), 0u);
}

TEST(RecycledVectors, TensorsOutliveTheirPool) {
  auto pool = RecycledVectors<float>::create(/*max_kept=*/1);
  torch::Tensor c = pool->to_tensor(std::vector<float>(5, 3.0f), torch::kFloat32);
  pool.reset();
  EXPECT_EQ(c.sum().item<float>(), 15.0f);
  c = torch::Tensor();
}

}  // namespace recycled_vectors_test
}  // namespace tzrec::feature
