// dense_optimizer.part_optimizers and dense_optimizer.ema through a real TrainingSession (DeepFM on
// synthetic Criteo rows): parameter routing by regex, part learning-rate schedules, checkpoint
// state keys and restore, EMA averages and the eval-time weight swap.
#include <filesystem>

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "config/pipeline_config.h"
#include "data/synthetic_criteo.h"
#include "feature/batch_loader.h"
#include "checkpoint/checkpoint.h"
#include "train/training_session.h"
#include "train/training_session_testing.h"

namespace tzrec::train {
namespace training_session_optim_test {


bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

class SessionOptimTest : public SyntheticDeepFmTest {
 protected:
  SessionOptimTest() : SyntheticDeepFmTest(384) {}

  void merge_dense(const std::string& text) {
    ASSERT_TRUE(google::protobuf::TextFormat::MergeFromString(
        text, config_.mutable_train_config()->mutable_dense_optimizer()))
        << text;
  }

  static std::map<std::string, torch::Tensor> dense_copy(TrainingSession& session) {
    std::map<std::string, torch::Tensor> out;
    for (auto& [name, t] : session.model().dense_parameters()) out.emplace(name, t.detach().clone());
    return out;
  }

};

// part0 (lr 0) takes output_mlp; part1 would match output_mlp too but gets only deep_mlp (first
// match wins) and runs its own exponential-decay schedule; part2 matches nothing and is dropped;
// the rest (fm, final_mlp) stays with the dense Adam optimizer.
TEST_F(SessionOptimTest, PartOptimizersRouteParametersByRegex) {
  merge_dense(R"(
    part_optimizers { regex_pattern: 'model\\.output_mlp\\..*' sgd_optimizer { lr: 0.0 momentum: 0.9 } }
    part_optimizers { regex_pattern: 'model\\.(output|deep)_mlp\\..*' adam_optimizer { lr: 0.01 }
                      exponential_decay_learning_rate { decay_size: 1 decay_factor: 0.5 } }
    part_optimizers { regex_pattern: 'deep_mlp\\..*' adam_optimizer { lr: 0.5 } }
  )");
  auto data = batches();
  torch::manual_seed(7);
  TrainingSession session(config_, true);
  ASSERT_EQ(session.num_part_optimizers(), 2u);  // part2 lacks the "model." prefix: no match
  EXPECT_EQ(session.part_optimizer_config_index(0), 0);
  EXPECT_EQ(session.part_optimizer_config_index(1), 1);
  for (const auto& [name, p] : session.part_optimizer(0).named_params()) {
    EXPECT_TRUE(starts_with(name, "output_mlp.")) << name;
  }
  ASSERT_FALSE(session.part_optimizer(1).named_params().empty());
  for (const auto& [name, p] : session.part_optimizer(1).named_params()) {
    EXPECT_TRUE(starts_with(name, "deep_mlp.")) << name;
  }
  ASSERT_FALSE(session.dense_optimizer().named_params().empty());
  for (const auto& [name, p] : session.dense_optimizer().named_params()) {
    EXPECT_FALSE(starts_with(name, "deep_mlp.") || starts_with(name, "output_mlp.")) << name;
  }
  EXPECT_EQ(session.part_optimizer(1).options().kind, optim::DenseOptimizerOptions::Kind::kAdam);

  auto before = dense_copy(session);
  auto lrs = session.dense_group_lrs();
  ASSERT_EQ(lrs.size(), 3u);
  EXPECT_NEAR(lrs[0], 0.001, 1e-9);  // dense Adam, constant
  EXPECT_EQ(lrs[1], 0.0);            // part0: its own lr on the dense (constant) schedule
  EXPECT_NEAR(lrs[2], 0.01, 1e-9);
  for (int i = 0; i < 2; ++i) train_on(session, data[i], i);
  EXPECT_NEAR(session.dense_group_lrs()[2], 0.01 * 0.25, 1e-9);  // part1 decays per step
  EXPECT_NEAR(session.dense_group_lrs()[0], 0.001, 1e-9);

  auto after = dense_copy(session);
  for (const auto& [name, t] : after) {
    if (starts_with(name, "output_mlp.")) {
      EXPECT_TRUE(torch::equal(t, before.at(name))) << name << " moved with lr 0";
    } else {
      EXPECT_FALSE(torch::equal(t, before.at(name))) << name << " did not move";
    }
  }
  // Checkpoint keys: part state under dense.part<i>., none of it in the dense optimizer's.
  auto state = session.optimizer_state();
  EXPECT_EQ(state.count("dense.part0.output_mlp.weight.momentum_buffer"), 1u);
  EXPECT_EQ(state.count("dense.output_mlp.weight.momentum_buffer"), 0u);
  bool part1_adam = false;
  for (const auto& [key, t] : state) {
    EXPECT_FALSE(starts_with(key, "dense.deep_mlp.") || starts_with(key, "dense.output_mlp.")) << key;
    part1_adam |= starts_with(key, "dense.part1.deep_mlp.") && key.find(".exp_avg_sq") != std::string::npos;
  }
  EXPECT_TRUE(part1_adam);

  // Restore continues identically (state of every part optimizer goes back to its owner).
  checkpointing::save_checkpoint(config_.model_dir(), snapshot(session, 1));
  torch::manual_seed(8);
  TrainingSession resumed(config_, true);
  resumed.restore(checkpointing::load_checkpoint(checkpointing::checkpoint_dir(config_.model_dir(), 1)), true);
  resumed.set_schedule_position(2, 0);
  EXPECT_EQ(resumed.dense_group_lrs(), session.dense_group_lrs());
  train_on(session, data[2], 2);
  train_on(resumed, data[2], 2);
  auto a = dense_copy(session), b = dense_copy(resumed);
  for (const auto& [name, t] : a) EXPECT_TRUE(torch::equal(t, b.at(name))) << name;
}

TEST_F(SessionOptimTest, InvalidRegexIsConfigError) {
  merge_dense("part_optimizers { regex_pattern: '(deep' adam_optimizer { lr: 0.01 } }");
  try {
    TrainingSession session(config_, true);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("train_config.dense_optimizer.part_optimizers[0].regex_pattern"),
              std::string::npos)
        << e.what();
  }
}

// EMA shadows follow torch's swa_utils EMA of the trained parameters (first update copies, later
// ones ema = decay*ema + (1-decay)*p), are checkpointed and restored, and can be swapped in.
TEST_F(SessionOptimTest, DenseEmaAveragesCheckpointsAndSwaps) {
  merge_dense("ema { decay: 0.5 }");
  EXPECT_TRUE(use_dense_ema_for_eval(config_));
  auto data = batches();
  torch::manual_seed(9);
  TrainingSession session(config_, true);
  ASSERT_NE(session.dense_ema(), nullptr);
  std::map<std::string, torch::Tensor> expected;
  for (int i = 0; i < 3; ++i) {
    train_on(session, data[i], i);
    for (auto& [name, p] : dense_copy(session)) {
      auto it = expected.find(name);
      if (it == expected.end()) {
        expected.emplace(name, p.to(torch::kFloat64));
      } else {
        it->second = 0.5 * it->second + 0.5 * p.to(torch::kFloat64);
      }
    }
  }
  std::map<std::string, torch::Tensor> ema;  // copies: ema_tensors() are the live shadows
  for (auto& [name, t] : session.ema_tensors()) ema.emplace(name, t.clone());
  ASSERT_EQ(ema.size(), expected.size());
  for (const auto& [name, t] : expected) {
    EXPECT_TRUE(torch::allclose(ema.at(name).to(torch::kFloat64), t, 1e-6, 1e-7)) << name;
  }
  auto trained = dense_copy(session);
  bool differs = false;
  for (const auto& [name, t] : trained) differs |= !torch::allclose(t, ema.at(name), 1e-6, 1e-7);
  EXPECT_TRUE(differs);
  {
    auto guard = session.swap_in_ema(true);
    for (auto& [name, t] : dense_copy(session)) EXPECT_TRUE(torch::equal(t, ema.at(name))) << name;
  }
  for (auto& [name, t] : dense_copy(session)) EXPECT_TRUE(torch::equal(t, trained.at(name))) << name;
  {
    auto guard = session.swap_in_ema(false);
    for (auto& [name, t] : dense_copy(session)) EXPECT_TRUE(torch::equal(t, trained.at(name))) << name;
  }

  auto state = session.optimizer_state();
  ASSERT_EQ(state.count("dense.ema.__n_averaged__"), 1u);
  EXPECT_EQ(state.at("dense.ema.__n_averaged__").item<int64_t>(), 3);
  checkpointing::save_checkpoint(config_.model_dir(), snapshot(session, 2));
  auto checkpoint = checkpointing::load_checkpoint(checkpointing::checkpoint_dir(config_.model_dir(), 2));

  // --continue_train: the EMA comes back (even with --ignore_restore_optimizer).
  TrainingSession resumed(config_, true);
  resumed.restore(checkpoint, /*restore_optimizer=*/false);
  EXPECT_EQ(resumed.dense_ema()->n_averaged(), 3);
  for (const auto& [name, t] : resumed.ema_tensors()) EXPECT_TRUE(torch::equal(t, ema.at(name))) << name;

  // `tzrec eval` with use_dense_ema: a model-only session gets the EMA weights.
  TrainingSession eval(config_, false);
  eval.restore(checkpoint, false);
  for (auto& [name, t] : dense_copy(eval)) EXPECT_TRUE(torch::equal(t, trained.at(name))) << name;
  eval.load_ema_weights(checkpoint);
  for (auto& [name, t] : dense_copy(eval)) EXPECT_TRUE(torch::equal(t, ema.at(name))) << name;
}

TEST_F(SessionOptimTest, UseDenseEmaFollowsConfig) {
  EXPECT_FALSE(use_dense_ema_for_eval(config_));
  config_.mutable_eval_config()->set_use_dense_ema(true);
  EXPECT_TRUE(use_dense_ema_for_eval(config_));
  merge_dense("ema {}");
  config_.mutable_eval_config()->set_use_dense_ema(false);
  EXPECT_FALSE(use_dense_ema_for_eval(config_));

  // A checkpoint trained without EMA cannot provide EMA weights.
  config_.mutable_train_config()->mutable_dense_optimizer()->clear_ema();
  auto data = batches();
  TrainingSession session(config_, true);
  EXPECT_EQ(session.dense_ema(), nullptr);
  EXPECT_TRUE(session.ema_tensors().empty());
  train_on(session, data[0], 0);
  auto checkpoint = snapshot(session, 0);
  for (const auto& [key, t] : checkpoint.optimizer) EXPECT_FALSE(starts_with(key, "dense.ema.")) << key;
  TrainingSession eval(config_, false);
  EXPECT_THROW(eval.load_ema_weights(checkpoint), CheckpointError);
}

}  // namespace training_session_optim_test
}  // namespace tzrec::train
