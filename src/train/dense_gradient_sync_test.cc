#include "train/dense_gradient_sync.h"

#include <gtest/gtest.h>

#include "dist/testing_multiprocess.h"

namespace tzrec::train {
namespace dense_gradient_sync_test {

// Parameters w1 [300], w2 [200], w3 [100] (+ w4 [10], used or not), in registration order. With a
// first bucket of 500 bytes and others of 1000, the buckets are [w4, w3], [w2], [w1].
struct Params {
  std::vector<torch::Tensor> all;
  Params() {
    for (int64_t n : {300, 200, 100, 10}) all.push_back(torch::zeros({n}).requires_grad_(true));
  }
};

// Rank r's loss: (r + 1) · (Σ w1·x1 + Σ w2·x2 + Σ w2·x2 + Σ w3·x3 [+ Σ w4·x4]), xk = arange · k, so
// its gradient is (r + 1) · xk (w2 used twice: 2 (r + 1) · x2).
torch::Tensor loss_of(const Params& p, int rank, bool use_w4) {
  torch::Tensor loss = torch::zeros({});
  const double c = rank + 1;
  for (size_t k = 0; k < p.all.size(); ++k) {
    if (k == 3 && !use_w4) continue;
    const torch::Tensor x = torch::arange(p.all[k].numel(), torch::kFloat32) * static_cast<double>(k + 1);
    loss = loss + c * (p.all[k] * x).sum();
    if (k == 1) loss = loss + c * (p.all[k] * x).sum();
  }
  return loss;
}

// The mean over 2 ranks of Σ_micro-batches (r + 1) · xk = 1.5 · micro · xk (w2 doubled).
void expect_mean_gradients(const Params& p, double micro, bool w4_used) {
  for (size_t k = 0; k < p.all.size(); ++k) {
    torch::Tensor want = torch::arange(p.all[k].numel(), torch::kFloat32) * static_cast<double>(k + 1) * 1.5 * micro;
    if (k == 1) want = want * 2;
    if (k == 3 && !w4_used) want = torch::zeros_like(want);
    ASSERT_TRUE(p.all[k].grad().defined()) << "w" << k + 1;
    EXPECT_TRUE(torch::allclose(p.all[k].grad(), want)) << "w" << k + 1;
  }
}

TEST(DenseGradientSync, BucketsStartDuringBackwardAndGiveTheMean) {
  auto statuses = dist::testing::run_ranks(2, [](dist::ProcessGroup& pg) {
    Params p;
    DenseGradientSync sync(pg.shared_from_this(), p.all, 1000, 500);
    ASSERT_EQ(sync.num_buckets(), 3);
    sync.prepare_for_backward();
    loss_of(p, pg.rank(), true).backward();
    sync.finish();
    EXPECT_EQ(sync.overlapped_buckets(), 3);  // every bucket went out inside backward
    expect_mean_gradients(p, 1, true);
  });
  dist::testing::expect_all_succeeded(statuses);
}

// Gradient accumulation: only the last micro-batch's backward is armed; its buckets carry what
// .grad already held.
TEST(DenseGradientSync, AccumulatedGradientsAreReduced) {
  auto statuses = dist::testing::run_ranks(2, [](dist::ProcessGroup& pg) {
    Params p;
    DenseGradientSync sync(pg.shared_from_this(), p.all, 1000, 500);
    loss_of(p, pg.rank(), true).backward();
    loss_of(p, pg.rank(), true).backward();
    sync.prepare_for_backward();
    loss_of(p, pg.rank(), true).backward();
    sync.finish();
    expect_mean_gradients(p, 3, true);
    // Without arming, finish() reduces from .grad (here: the mean again, unchanged).
    sync.finish();
    EXPECT_EQ(sync.overlapped_buckets(), 0);
    expect_mean_gradients(p, 3, true);
  });
  dist::testing::expect_all_succeeded(statuses);
}

// w4 gets no gradient: its bucket (the first) cannot start in backward, nor can the later ones
// (buckets start in order); finish() reduces them with zeros for w4.
TEST(DenseGradientSync, UnusedParameterIsZeroAndLaterBucketsWait) {
  auto statuses = dist::testing::run_ranks(2, [](dist::ProcessGroup& pg) {
    Params p;
    DenseGradientSync sync(pg.shared_from_this(), p.all, 1000, 500);
    sync.prepare_for_backward();
    loss_of(p, pg.rank(), false).backward();
    sync.finish();
    EXPECT_EQ(sync.overlapped_buckets(), 0);
    expect_mean_gradients(p, 1, false);
  });
  dist::testing::expect_all_succeeded(statuses);
}

TEST(DenseGradientSync, SingleProcessLeavesGradientsAlone) {
  Params p;
  DenseGradientSync sync(nullptr, p.all);
  sync.prepare_for_backward();
  loss_of(p, 0, true).backward();
  sync.finish();
  EXPECT_TRUE(torch::allclose(p.all[0].grad(), torch::arange(300, torch::kFloat32)));
}

}  // namespace dense_gradient_sync_test
}  // namespace tzrec::train
