// train_config.mixed_precision "FP16" through a real TrainingSession (DeepFM on synthetic Criteo
// rows): loss scaling, skipped steps on overflow (dense parameters and embedding rows untouched),
// the scale's backoff and growth, its checkpoint state, the gradient observer, and convergence
// close to fp32.
#include <cmath>
#include <filesystem>
#include <vector>

#include <gtest/gtest.h>

#include "checkpoint/checkpoint.h"
#include "train/training_session.h"
#include "train/training_session_testing.h"

namespace tzrec::train {
namespace training_session_fp16_test {

class SessionFp16Test : public SyntheticDeepFmTest {
 protected:
  SessionFp16Test() : SyntheticDeepFmTest(1024) {}

  void use_fp16(double init_scale, int64_t growth_interval) {
    auto* train = config_.mutable_train_config();
    train->set_mixed_precision("FP16");
    train->mutable_grad_scaler()->set_init_scale(static_cast<float>(init_scale));
    train->mutable_grad_scaler()->set_growth_interval(static_cast<uint32_t>(growth_interval));
  }

  // One step whose loss is multiplied by `factor` (1e30: the loss-scaled gradients overflow fp16).
  static double train_scaled(TrainingSession& session, const sparse::Batch& batch, int64_t step,
                             double factor = 1.0) {
    auto predictions = session.model().predict(batch);
    torch::Tensor loss = session.model().loss(predictions, batch).begin()->second;
    session.backward_and_step(loss * factor, step);
    session.advance_step_schedules();
    return loss.item<double>();
  }

  static std::vector<std::pair<std::string, torch::Tensor>> copy_model(TrainingSession& session) {
    std::vector<std::pair<std::string, torch::Tensor>> out;
    for (auto& [name, t] : session.model_tensors()) out.emplace_back(name, t.detach().clone());
    return out;
  }

  static bool is_table(const std::string& name) { return name.rfind("embedding_group.", 0) == 0; }

  // Whether any tensor moved, split into embedding tables and dense tensors.
  static std::pair<bool, bool> moved(TrainingSession& session,
                                     const std::vector<std::pair<std::string, torch::Tensor>>& before) {
    auto now = session.model_tensors();
    bool table = false, dense = false;
    for (size_t i = 0; i < now.size(); ++i) {
      if (torch::equal(now[i].second, before[i].second)) continue;
      (is_table(now[i].first) ? table : dense) = true;
    }
    return {table, dense};
  }

  static double global_grad_norm(TrainingSession& session) {
    double sum = 0;
    for (auto& [name, p] : session.model().dense_parameters()) {
      if (p.grad().defined()) sum += p.grad().to(torch::kFloat64).pow(2).sum().item<double>();
    }
    return std::sqrt(sum);
  }
};

TEST_F(SessionFp16Test, OverflowSkipsTheStepOnBothSidesAndBacksOff) {
  use_fp16(1024, 2);
  auto data = batches();
  torch::manual_seed(1);
  TrainingSession session(config_, true);
  ASSERT_NE(session.grad_scaler(), nullptr);
  EXPECT_EQ(session.grad_scale(), 1024.0);
  std::vector<int64_t> observed;
  session.set_gradient_observer([&](int64_t step) { observed.push_back(step); });

  // Step 0: clean, both sides move; the tracker counts it.
  auto before = copy_model(session);
  train_scaled(session, data[0], 0);
  EXPECT_FALSE(session.last_step_skipped());
  EXPECT_EQ(moved(session, before), std::make_pair(true, true));
  EXPECT_EQ(session.grad_scale(), 1024.0);
  EXPECT_EQ(session.grad_scaler()->growth_tracker(), 1);

  // Step 1: overflow. Nothing moves (tables, dense parameters, optimizer state); the scale halves.
  before = copy_model(session);
  std::map<std::string, torch::Tensor> state_before;
  for (auto& [k, v] : session.optimizer_state()) state_before.emplace(k, v.clone());
  train_scaled(session, data[1], 1, 1e30);
  EXPECT_TRUE(session.last_step_skipped());
  EXPECT_TRUE(session.sparse_optimizer().last_backward_found_inf());
  EXPECT_EQ(moved(session, before), std::make_pair(false, false));
  for (auto& [k, v] : session.optimizer_state()) {
    if (k.rfind("dense.grad_scaler.", 0) == 0) continue;
    EXPECT_TRUE(torch::equal(v, state_before.at(k))) << k;
  }
  EXPECT_EQ(session.grad_scale(), 512.0);
  EXPECT_EQ(session.grad_scaler()->growth_tracker(), 0);

  // Steps 2, 3: clean; after growth_interval (2) clean steps the scale doubles.
  before = copy_model(session);
  train_scaled(session, data[2], 2);
  EXPECT_FALSE(session.last_step_skipped());
  EXPECT_FALSE(session.sparse_optimizer().last_backward_found_inf());
  EXPECT_EQ(moved(session, before), std::make_pair(true, true));
  EXPECT_EQ(session.grad_scale(), 512.0);
  train_scaled(session, data[3], 3);
  EXPECT_EQ(session.grad_scale(), 1024.0);
  EXPECT_EQ(session.grad_scaler()->growth_tracker(), 0);
  // The observer runs on the steps whose dense update happens.
  EXPECT_EQ(observed, (std::vector<int64_t>{0, 2, 3}));
}

// The observer sees the final (unscaled) gradients: the FP16 session's gradient norm is the fp32
// one up to fp16 rounding, not 1024 times it.
TEST_F(SessionFp16Test, ObserverSeesUnscaledGradients) {
  auto data = batches();
  double fp32_norm = -1, fp16_norm = -1;
  torch::manual_seed(2);
  TrainingSession fp32(config_, true);
  fp32.set_gradient_observer([&](int64_t) { fp32_norm = global_grad_norm(fp32); });
  EXPECT_EQ(fp32.grad_scale(), 1.0);
  EXPECT_EQ(fp32.grad_scaler(), nullptr);
  train_scaled(fp32, data[0], 0);

  use_fp16(1024, 2000);
  torch::manual_seed(2);
  TrainingSession fp16(config_, true);
  fp16.set_gradient_observer([&](int64_t) { fp16_norm = global_grad_norm(fp16); });
  train_scaled(fp16, data[0], 0);
  ASSERT_GT(fp32_norm, 0);
  ASSERT_GT(fp16_norm, 0);
  EXPECT_NEAR(fp16_norm / fp32_norm, 1.0, 0.02);
  EXPECT_NE(fp16_norm, fp32_norm);  // the emulation did round
}

TEST_F(SessionFp16Test, ScalerStateIsCheckpointed) {
  use_fp16(1024, 3);
  auto data = batches();
  torch::manual_seed(3);
  TrainingSession session(config_, true);
  train_scaled(session, data[0], 0, 1e30);  // scale 512
  train_scaled(session, data[1], 1);        // tracker 1
  auto state = session.optimizer_state();
  EXPECT_EQ(state.at("dense.grad_scaler.scale").item<float>(), 512.0f);
  EXPECT_EQ(state.at("dense.grad_scaler.growth_tracker").item<int64_t>(), 1);
  checkpointing::save_checkpoint(config_.model_dir(), snapshot(session, 1));
  const checkpointing::CheckpointData fp16_checkpoint = checkpointing::load_checkpoint(checkpointing::checkpoint_dir(config_.model_dir(), 1));

  TrainingSession resumed(config_, true);
  EXPECT_EQ(resumed.grad_scale(), 1024.0);
  resumed.restore(fp16_checkpoint, true);
  EXPECT_EQ(resumed.grad_scale(), 512.0);
  EXPECT_EQ(resumed.grad_scaler()->growth_tracker(), 1);
  // Without optimizer state the scaler starts afresh.
  TrainingSession fresh(config_, true);
  fresh.restore(fp16_checkpoint, false);
  EXPECT_EQ(fresh.grad_scale(), 1024.0);

  // An fp32 session ignores the scaler keys; an FP16 session restored from an fp32 checkpoint
  // keeps init_scale.
  auto fp32_config = config_;
  fp32_config.mutable_train_config()->clear_mixed_precision();
  TrainingSession fp32(fp32_config, true);
  EXPECT_NO_THROW(fp32.restore(fp16_checkpoint, true));
  EXPECT_EQ(fp32.optimizer_state().count("dense.grad_scaler.scale"), 0u);
  checkpointing::CheckpointData fp32_checkpoint;
  fp32_checkpoint.step = 1;
  for (auto& [name, t] : fp32.model_tensors()) fp32_checkpoint.model.emplace(name, t.clone());
  for (auto& [name, t] : fp32.optimizer_state()) fp32_checkpoint.optimizer.emplace(name, t.clone());
  TrainingSession from_fp32(config_, true);
  EXPECT_NO_THROW(from_fp32.restore(fp32_checkpoint, true));
  EXPECT_EQ(from_fp32.grad_scale(), 1024.0);
}

// Gradient accumulation: an overflow in any micro step skips the window's dense step; the sparse
// side skips only the overflowing micro step.
TEST_F(SessionFp16Test, OverflowInsideAnAccumulationWindowSkipsItsDenseStep) {
  use_fp16(1024, 2000);
  config_.mutable_train_config()->set_gradient_accumulation_steps(2);
  auto data = batches();
  torch::manual_seed(4);
  TrainingSession session(config_, true);
  int observed = 0;
  session.set_gradient_observer([&](int64_t) { ++observed; });
  auto before = copy_model(session);
  train_scaled(session, data[0], 0, 1e30);  // sparse skipped, dense waits for the window's end
  EXPECT_TRUE(session.last_step_skipped());
  EXPECT_EQ(moved(session, before), std::make_pair(false, false));
  train_scaled(session, data[1], 1);  // sparse updates; the window's dense step is skipped
  EXPECT_TRUE(session.last_step_skipped());
  EXPECT_EQ(moved(session, before), std::make_pair(true, false));
  EXPECT_EQ(session.grad_scale(), 512.0);
  EXPECT_EQ(observed, 0);
  before = copy_model(session);
  train_scaled(session, data[2], 2);
  train_scaled(session, data[3], 3);
  EXPECT_FALSE(session.last_step_skipped());
  EXPECT_EQ(moved(session, before), std::make_pair(true, true));
  EXPECT_EQ(observed, 1);
  EXPECT_EQ(session.grad_scale(), 512.0);
}

// FP16 (default grad_scaler) trains DeepFM to the fp32 loss within a few percent.
TEST_F(SessionFp16Test, ConvergesLikeFp32) {
  auto data = batches();
  ASSERT_EQ(data.size(), 8u);
  auto run = [&](const protos::EasyRecConfig& config, int* skipped) {
    torch::manual_seed(5);
    TrainingSession session(config, true);
    std::vector<double> epoch_loss;
    int64_t step = 0;
    for (int epoch = 0; epoch < 4; ++epoch) {
      double sum = 0;
      for (const auto& batch : data) {
        sum += train_scaled(session, batch, step++);
        if (skipped != nullptr && session.last_step_skipped()) ++*skipped;
      }
      epoch_loss.push_back(sum / static_cast<double>(data.size()));
    }
    return epoch_loss;
  };
  const auto fp32 = run(config_, nullptr);
  config_.mutable_train_config()->set_mixed_precision("FP16");
  int skipped = 0;
  const auto fp16 = run(config_, &skipped);
  for (size_t e = 0; e < fp32.size(); ++e) {
    SCOPED_TRACE(::testing::Message() << "epoch " << e << ": fp32 " << fp32[e] << ", fp16 " << fp16[e]);
    EXPECT_NEAR(fp16[e] / fp32[e], 1.0, 0.03);
  }
  EXPECT_LT(fp32.back(), fp32.front());  // it learns
  EXPECT_LT(fp16.back(), fp16.front());
  EXPECT_NE(fp16.back(), fp32.back());  // and the emulation is in effect
  EXPECT_LE(skipped, 4);
}

}  // namespace training_session_fp16_test
}  // namespace tzrec::train
