// FP16 loss scaling in a two-rank TrainingSession (ranks as processes, Gloo on 127.0.0.1): an
// overflow on one rank skips the dense step and every shard update on both ranks, and both ranks
// keep the same loss scale.
#include <gtest/gtest.h>

#include "dist/testing_multiprocess.h"
#include "train/training_session.h"
#include "train/training_session_testing.h"

namespace tzrec::train {
namespace distributed_fp16_session_test {

namespace dt = dist::testing;

class DistributedFp16Test : public SyntheticDeepFmTest {
 protected:
  DistributedFp16Test() : SyntheticDeepFmTest(512) {}
};

std::vector<torch::Tensor> trained_tensors(TrainingSession& session) {
  std::vector<torch::Tensor> out;
  for (auto& [name, t] : session.model().dense_parameters()) out.push_back(t.detach().clone());
  for (const auto& ls : session.sharded_embeddings()->local_shards()) out.push_back(ls.weight.clone());
  return out;
}

bool any_moved(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (!torch::equal(a[i], b[i])) return true;
  }
  return false;
}

TEST_F(DistributedFp16Test, OverflowOnOneRankSkipsTheStepEverywhere) {
  config_.mutable_train_config()->set_mixed_precision("FP16");
  config_.mutable_train_config()->mutable_grad_scaler()->set_init_scale(1024);
  auto data = batches();
  ASSERT_EQ(data.size(), 4u);
  auto statuses = dt::run_ranks(2, [&](dist::ProcessGroup& pg) {
    const int rank = pg.rank();
    torch::manual_seed(1);
    TrainingSession session(config_, true, pg.shared_from_this());
    ASSERT_TRUE(session.distributed());
    auto step = [&](int64_t i, double factor) {
      auto predictions = session.model().predict(data[2 * (i % 2) + rank]);
      auto loss = session.model().loss(predictions, data[2 * (i % 2) + rank]).begin()->second;
      session.backward_and_step(loss * factor, i);
      session.advance_step_schedules();
    };
    auto before = trained_tensors(session);
    step(0, 1.0);
    EXPECT_FALSE(session.last_step_skipped());
    EXPECT_TRUE(any_moved(before, trained_tensors(session))) << "rank " << rank;
    before = trained_tensors(session);
    step(1, rank == 1 ? 1e30 : 1.0);  // only rank 1 overflows
    EXPECT_TRUE(session.last_step_skipped()) << "rank " << rank;
    EXPECT_FALSE(any_moved(before, trained_tensors(session))) << "rank " << rank;
    EXPECT_EQ(session.grad_scale(), 512.0) << "rank " << rank;
    step(2, 1.0);
    EXPECT_FALSE(session.last_step_skipped());
    EXPECT_TRUE(any_moved(before, trained_tensors(session))) << "rank " << rank;
    EXPECT_EQ(session.grad_scale(), 512.0);
    EXPECT_EQ(session.grad_scaler()->growth_tracker(), 1);
  });
  dt::expect_all_succeeded(statuses);
}

}  // namespace distributed_fp16_session_test
}  // namespace tzrec::train
