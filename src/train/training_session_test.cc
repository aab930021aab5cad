// Checkpoint round trip through a real TrainingSession: a restored model predicts exactly what
// the saved one did, and restored optimizer state continues training identically.
#include "train/training_session.h"
#include "train/training_session_testing.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>

#include <gtest/gtest.h>

#include "config/pipeline_config.h"
#include "data/synthetic_criteo.h"
#include "feature/batch_loader.h"
#include "feature/features.h"
#include "models/model.h"
#include "base/error.h"
#include "checkpoint/checkpoint.h"
#include "train/embedding_sharding.h"

namespace tzrec::train {
namespace training_session_test {


class TrainingSessionTest : public SyntheticDeepFmTest {
 protected:
  TrainingSessionTest() : SyntheticDeepFmTest(512) {}

  // Session a trains on batches 0 and 1 and is checkpointed; session b (another seed) restores
  // that checkpoint; both train on batches 2 and 3, then `check` compares them. Their optimizer
  // states must be equal.
  void restore_and_continue(const std::function<void(TrainingSession& a, TrainingSession& b)>& check) {
    auto data = batches();
    torch::manual_seed(1);
    TrainingSession a(config_, true);
    for (int i = 0; i < 2; ++i) train_on(a, data[i], i);
    checkpointing::save_checkpoint(config_.model_dir(), snapshot(a, 1));

    torch::manual_seed(3);
    TrainingSession b(config_, true);
    b.restore(checkpointing::load_checkpoint(checkpointing::checkpoint_dir(config_.model_dir(), 1)), true);
    b.set_schedule_position(2, 0);
    for (int i = 2; i < 4; ++i) {
      train_on(a, data[i], i);
      train_on(b, data[i], i);
    }
    check(a, b);
    auto sa = a.optimizer_state();
    auto sb = b.optimizer_state();
    ASSERT_EQ(sa.size(), sb.size());
    for (const auto& [name, tensor] : sa) EXPECT_TRUE(torch::equal(tensor, sb.at(name))) << name;
  }
};

TEST_F(TrainingSessionTest, RestoredModelPredictsIdentically) {
  auto data = batches();
  ASSERT_EQ(data.size(), 4u);
  torch::manual_seed(1);
  TrainingSession trained(config_, true);
  for (int i = 0; i < 3; ++i) train_on(trained, data[i], i);
  checkpointing::save_checkpoint(config_.model_dir(), snapshot(trained, 2));

  torch::manual_seed(2);  // different initial weights
  TrainingSession restored(config_, false);
  trained.model().eval();
  restored.model().eval();
  torch::NoGradGuard no_grad;
  auto before = restored.model().predict(data[3])["probs"].clone();
  restored.restore(checkpointing::load_checkpoint(checkpointing::checkpoint_dir(config_.model_dir(), 2)), false);
  auto expected = trained.model().predict(data[3])["probs"];
  auto actual = restored.model().predict(data[3])["probs"];
  EXPECT_FALSE(torch::equal(before, expected));
  EXPECT_TRUE(torch::equal(actual, expected));
}

// feature_configs data_type FP16: float16 tables (wide and deep), trained by the fused optimizer
// in float32 math, saved as F16 and restored bit for bit.
TEST_F(TrainingSessionTest, Fp16TablesTrainSaveAndRestore) {
  for (auto& f : *config_.mutable_feature_configs()) {
    if (f.has_id_feature()) f.mutable_id_feature()->set_data_type("FP16");
  }
  auto data = batches();
  torch::manual_seed(1);
  TrainingSession trained(config_, true);
  ASSERT_FALSE(trained.model().embedding_tables().empty());
  std::map<std::string, torch::Tensor> initial;
  for (const auto& t : trained.model().embedding_tables()) {
    EXPECT_EQ(t.weight.scalar_type(), torch::kFloat16) << t.name;
    initial[t.name] = t.weight.detach().clone();
  }
  for (int i = 0; i < 3; ++i) train_on(trained, data[i], i);
  int changed = 0;
  for (const auto& t : trained.model().embedding_tables()) changed += !torch::equal(t.weight, initial[t.name]);
  EXPECT_EQ(changed, static_cast<int>(initial.size())) << "every table is updated in float16";
  checkpointing::save_checkpoint(config_.model_dir(), snapshot(trained, 2));
  const auto stored = checkpointing::load_checkpoint(checkpointing::checkpoint_dir(config_.model_dir(), 2));
  EXPECT_EQ(stored.model.at("embedding_group.emb_impls.__BASE__.ebc.embedding_bags.cat_0_emb.weight").scalar_type(),
            torch::kFloat16);

  torch::manual_seed(2);
  TrainingSession restored(config_, false);
  restored.restore(stored, false);
  for (const auto& t : restored.model().embedding_tables()) {
    for (const auto& u : trained.model().embedding_tables()) {
      if (u.name == t.name) EXPECT_TRUE(torch::equal(t.weight, u.weight)) << t.name;
    }
  }
  trained.model().eval();
  restored.model().eval();
  torch::NoGradGuard no_grad;
  // The fused forward (trained) and the plain one (restored) both pool float16 rows in float32.
  EXPECT_TRUE(torch::allclose(restored.model().predict(data[3])["probs"], trained.model().predict(data[3])["probs"],
                              1e-6, 1e-6));
}

TEST_F(TrainingSessionTest, RestoredOptimizerContinuesIdentically) {
  restore_and_continue([](TrainingSession& a, TrainingSession& b) {
    auto ta = a.model_tensors();
    auto tb = b.model_tensors();
    ASSERT_EQ(ta.size(), tb.size());
    for (size_t i = 0; i < ta.size(); ++i) {
      EXPECT_TRUE(torch::equal(ta[i].second, tb[i].second)) << ta[i].first;
    }
  });
}

// Zero-collision hashed features (docs/tzrec-compatibility.md §5.12): cat_0 and cat_2 get zch
// tables (evictions every 2 steps). A session restored from the checkpoint of step 1 (after the
// eviction of step 2) continues exactly as the uninterrupted one: remapping buffers, weights (the
// rows reset at the eviction of step 4 included) and optimizer state.
TEST_F(TrainingSessionTest, ZchTablesRestoreAndContinueIdentically) {
  for (auto& fc : *config_.mutable_feature_configs()) {
    if (!fc.has_id_feature()) continue;
    auto* id = fc.mutable_id_feature();
    if (id->feature_name() != "cat_0" && id->feature_name() != "cat_2") continue;
    id->clear_num_buckets();
    id->mutable_zch()->set_zch_size(id->feature_name() == "cat_0" ? 64 : 256);
    id->mutable_zch()->set_eviction_interval(2);
    id->mutable_zch()->mutable_lfu();
    if (id->feature_name() == "cat_2") id->mutable_zch()->set_threshold_filtering_func("lambda x: (x > 1, 1)");
  }
  restore_and_continue([](TrainingSession& a, TrainingSession& b) {
    const std::string mc = "embedding_group.emb_impls.__BASE__.mc_ebc.";
    std::map<std::string, torch::Tensor> tb;
    for (auto& [name, tensor] : b.model_tensors()) tb.emplace(name, tensor);
    int zch_tensors = 0;
    for (auto& [name, tensor] : a.model_tensors()) {
      ASSERT_EQ(tb.count(name), 1u) << name;
      EXPECT_TRUE(torch::equal(tensor, tb.at(name))) << name;
      if (name.rfind(mc, 0) == 0) ++zch_tensors;
    }
    // cat_0_emb, cat_2_emb and their WIDE twins: per table the weight and five buffers (lfu).
    EXPECT_EQ(zch_tensors, 4 * (1 + 5));
    const std::string buffers = mc + "_managed_collision_collection._managed_collision_modules.cat_0_emb.";
    EXPECT_EQ(tb.at(buffers + "_current_iter_tensor").item<int64_t>(), 4);
    EXPECT_GT((tb.at(buffers + "_mch_sorted_raw_ids") != std::numeric_limits<int64_t>::max()).sum().item<int64_t>(), 0);
    EXPECT_EQ(tb.at(mc + "_embedding_module.embedding_bags.cat_0_emb.weight").size(0), 64);
  });
}

// A single-process session checks its tables' memory on a model built once more without them
// (train/embedding_sharding.h, check_tables_fit_one_process); that build must not draw from the
// random generator: the session's initial values are those of the model built directly.
TEST_F(TrainingSessionTest, MemoryCheckLeavesInitialValuesUnchanged) {
  torch::manual_seed(7);
  TrainingSession session(config_, true);
  torch::manual_seed(7);
  const auto direct = models::create_model(config_, feature::build_feature_infos(config_));
  std::map<std::string, torch::Tensor> expected;
  for (const auto& item : direct->named_parameters(/*recurse=*/true)) expected.emplace(item.key(), item.value());
  int compared = 0;
  for (const auto& item : session.model().named_parameters(/*recurse=*/true)) {
    ASSERT_TRUE(expected.count(item.key())) << item.key();
    EXPECT_TRUE(torch::equal(item.value(), expected.at(item.key()))) << item.key();
    ++compared;
  }
  EXPECT_EQ(compared, static_cast<int>(expected.size()));
}

TEST_F(TrainingSessionTest, IgnoringOptimizerStateDiverges) {
  auto data = batches();
  torch::manual_seed(1);
  TrainingSession a(config_, true);
  for (int i = 0; i < 2; ++i) train_on(a, data[i], i);
  checkpointing::save_checkpoint(config_.model_dir(), snapshot(a, 1));
  TrainingSession b(config_, true);
  b.restore(checkpointing::load_checkpoint(checkpointing::checkpoint_dir(config_.model_dir(), 1)), /*restore_optimizer=*/false);
  train_on(a, data[2], 2);
  train_on(b, data[2], 2);
  bool any_differs = false;
  auto ta = a.model_tensors();
  auto tb = b.model_tensors();
  for (size_t i = 0; i < ta.size(); ++i) any_differs |= !torch::equal(ta[i].second, tb[i].second);
  EXPECT_TRUE(any_differs);
}

// Gradient accumulation over 4 steps of B rows updates dense parameters exactly like one step on
// the same 4*B rows (sparse tables frozen by lr 0, since fused sparse updates never accumulate).
TEST_F(TrainingSessionTest, GradientAccumulationEqualsOneStepOnTheLargerBatch) {
  auto* train = config_.mutable_train_config();
  train->mutable_sparse_optimizer()->mutable_sgd_optimizer()->set_lr(0.0);
  train->mutable_dense_optimizer()->mutable_sgd_optimizer()->set_lr(0.5);
  train->mutable_dense_optimizer()->mutable_sgd_optimizer()->set_momentum(0.0);
  auto small = batches();  // 4 x 128 rows
  config_.mutable_data_config()->set_batch_size(512);
  auto large = batches();  // 1 x 512 rows, same rows in the same order
  ASSERT_EQ(small.size(), 4u);
  ASSERT_EQ(large.size(), 1u);

  config_.mutable_train_config()->set_gradient_accumulation_steps(4);
  torch::manual_seed(5);
  TrainingSession accumulated(config_, true);
  config_.mutable_train_config()->set_gradient_accumulation_steps(0);
  torch::manual_seed(5);
  TrainingSession direct(config_, true);
  auto before = accumulated.model_tensors();
  std::vector<torch::Tensor> initial;
  for (auto& [name, t] : before) initial.push_back(t.clone());

  for (int i = 0; i < 3; ++i) {
    train_on(accumulated, small[i], i);
    // Inside the window nothing dense moves yet.
    auto now = accumulated.model_tensors();
    for (size_t k = 0; k < now.size(); ++k) EXPECT_TRUE(torch::equal(now[k].second, initial[k])) << now[k].first;
  }
  train_on(accumulated, small[3], 3);
  train_on(direct, large[0], 0);
  auto ta = accumulated.model_tensors();
  auto tb = direct.model_tensors();
  bool moved = false;
  for (size_t k = 0; k < ta.size(); ++k) {
    EXPECT_TRUE(torch::allclose(ta[k].second, tb[k].second, 1e-5, 1e-6)) << ta[k].first;
    moved |= !torch::equal(ta[k].second, initial[k]);
  }
  EXPECT_TRUE(moved);
}

// grad_clipping by value bounds every dense update of plain SGD (lr 1) by max_gradient.
TEST_F(TrainingSessionTest, GradClippingByValueBoundsDenseUpdates) {
  auto* train = config_.mutable_train_config();
  train->mutable_dense_optimizer()->mutable_sgd_optimizer()->set_lr(1.0);
  train->mutable_dense_optimizer()->mutable_sgd_optimizer()->set_momentum(0.0);
  train->mutable_grad_clipping()->set_clipping_type("value");
  train->mutable_grad_clipping()->set_max_gradient(1e-4);
  auto data = batches();
  TrainingSession session(config_, true);
  auto dense = session.model().dense_parameters();
  std::vector<torch::Tensor> initial;
  for (auto& [name, t] : dense) initial.push_back(t.clone());
  train_on(session, data[0], 0);
  double max_change = 0;
  for (size_t k = 0; k < dense.size(); ++k) {
    max_change = std::max(max_change, (dense[k].second - initial[k]).abs().max().item<double>());
  }
  EXPECT_GT(max_change, 0.0);
  EXPECT_LE(max_change, 1e-4 + 1e-7);  // float32 rounding of w - update
}

// A manual-step schedule changes the learning rate the optimizers use at the scheduled step, and
// set_schedule_position puts a restored session at the same point.
TEST_F(TrainingSessionTest, LearningRateScheduleDrivesTheOptimizers) {
  auto* dense = config_.mutable_train_config()->mutable_dense_optimizer();
  dense->mutable_adam_optimizer()->set_lr(0.01);
  auto* manual = dense->mutable_manual_step_learning_rate();
  manual->add_schedule_sizes(2);
  manual->add_learning_rates(0.001);
  auto data = batches();
  TrainingSession session(config_, true);
  EXPECT_NEAR(session.dense_lr(), 0.01, 1e-9);
  // TorchEasyRec's ManualStepLR: t = steps done; bisect_left([2], t) keeps 0.01 through t = 2.
  for (int i = 0; i < 3; ++i) train_on(session, data[i], i);
  EXPECT_NEAR(session.dense_optimizer().lr(), 0.01, 1e-9);  // used by step 2 (t = 2)
  EXPECT_NEAR(session.dense_lr(), 0.001, 1e-9);             // t = 3
  train_on(session, data[3], 3);
  EXPECT_NEAR(session.dense_optimizer().lr(), 0.001, 1e-9);  // used by step 3

  TrainingSession resumed(config_, true);
  resumed.set_schedule_position(4, 0);
  EXPECT_NEAR(resumed.dense_lr(), session.dense_lr(), 1e-12);
}

}  // namespace training_session_test
}  // namespace tzrec::train
