#include "optim/gradient_accumulation.h"

#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "optim/dense_optimizer.h"

namespace tzrec::optim {
namespace gradient_accumulation_test {

TEST(GradientAccumulation, OffForZeroAndOne) {
  for (int64_t n : {0, 1}) {
    GradientAccumulation acc(n);
    EXPECT_FALSE(acc.enabled());
    EXPECT_EQ(acc.loss_divisor(), 1);
    for (int64_t step = 0; step < 5; ++step) {
      EXPECT_TRUE(acc.zero_grad_before(step));
      EXPECT_TRUE(acc.step_after(step));
      EXPECT_EQ(acc.window_start(step), step);
    }
  }
}

// TZRecOptimizer with N = 3: zero_grad forwarded when _step % 3 == 0 (before steps 0, 3, 6),
// step forwarded when the incremented _step % 3 == 0 (after steps 2, 5, 8).
TEST(GradientAccumulation, WindowsOfThree) {
  GradientAccumulation acc(3);
  EXPECT_TRUE(acc.enabled());
  EXPECT_EQ(acc.loss_divisor(), 3);
  const std::vector<bool> zero = {true, false, false, true, false, false, true, false, false};
  const std::vector<bool> step = {false, false, true, false, false, true, false, false, true};
  const std::vector<int64_t> start = {0, 0, 0, 3, 3, 3, 6, 6, 6};
  for (int64_t i = 0; i < 9; ++i) {
    EXPECT_EQ(acc.zero_grad_before(i), zero[i]) << i;
    EXPECT_EQ(acc.step_after(i), step[i]) << i;
    EXPECT_EQ(acc.window_start(i), start[i]) << i;
  }
}

// The helper driving a dense SGD over 4 micro batches equals one step on the 4x batch (mean
// loss), as tzrec's loss / N accumulation intends.
TEST(GradientAccumulation, FourMicroBatchesEqualOneBigBatch) {
  torch::manual_seed(0);
  const auto x = torch::randn({8, 3});
  const auto y = torch::randn({8});
  const auto w0 = torch::randn({3});

  DenseOptimizerOptions options;
  options.kind = DenseOptimizerOptions::Kind::kSgd;
  options.lr = 0.1;
  options.momentum = 0.0;

  auto w_big = w0.clone().requires_grad_(true);
  DenseOptimizer big(options, {{"w", w_big}});
  big.zero_grad();
  (torch::matmul(x, w_big) - y).pow(2).mean().backward();
  big.step();

  auto w_acc = w0.clone().requires_grad_(true);
  DenseOptimizer small(options, {{"w", w_acc}});
  GradientAccumulation acc(4);
  int steps_taken = 0;
  for (int64_t i = 0; i < 4; ++i) {
    if (acc.zero_grad_before(i)) small.zero_grad();
    const auto xs = x.slice(0, 2 * i, 2 * i + 2);
    const auto ys = y.slice(0, 2 * i, 2 * i + 2);
    auto loss = (torch::matmul(xs, w_acc) - ys).pow(2).mean();
    (loss / acc.loss_divisor()).backward();
    if (acc.step_after(i)) {
      small.step();
      ++steps_taken;
    }
    if (i < 3) EXPECT_TRUE(torch::equal(w_acc.detach(), w0)) << "updated inside the window";
  }
  EXPECT_EQ(steps_taken, 1);
  EXPECT_TRUE(torch::allclose(w_acc.detach(), w_big.detach(), 1e-6, 1e-7));
  EXPECT_FALSE(torch::equal(w_acc.detach(), w0));
}

}  // namespace gradient_accumulation_test
}  // namespace tzrec::optim
