// keep_checkpoint_max pruning: newest N (+ the best by train_eval_result_v2.txt with
// exporter_type "best") survive; the checkpoint just written never goes.
#include "train/checkpoint_policy.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "base/error.h"
#include "config/pipeline_config.h"
#include "checkpoint/checkpoint.h"

namespace tzrec::train {
namespace checkpoint_policy_test {

namespace fs = std::filesystem;

class CheckpointPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tzrec_ckpt_policy_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void save(int64_t step) {
    checkpointing::CheckpointData data;
    data.step = step;
    data.model.emplace("w", torch::full({2}, static_cast<float>(step)));
    checkpointing::save_checkpoint(dir_.string(), data);
  }
  // One train_eval_result_v2.txt line per (step, auc, loss).
  void results(const std::vector<std::tuple<int64_t, double, double>>& rows) {
    std::ofstream out(dir_ / "train_eval_result_v2.txt");
    for (const auto& [step, auc, loss] : rows) {
      out << "{\"auc\": " << auc << ", \"global_step\": " << step << ", \"loss\": " << loss << "}\n";
    }
  }
  std::vector<int64_t> remaining() {
    std::vector<int64_t> out;
    for (const auto& [path, step] : checkpointing::list_checkpoints(dir_.string())) out.push_back(step);
    return out;
  }

  fs::path dir_;
};

using Steps = std::vector<int64_t>;

TEST_F(CheckpointPolicyTest, KeepsNewestN) {
  for (int64_t s : {10, 20, 30, 40, 50}) save(s);
  CheckpointRetention keep;
  keep.keep_max = 2;
  const auto deleted = prune_checkpoints(dir_.string(), keep, 50);
  EXPECT_EQ(remaining(), (Steps{40, 50}));
  ASSERT_EQ(deleted.size(), 3u);
  EXPECT_EQ(deleted[0], checkpointing::checkpoint_dir(dir_.string(), 10));
  // Nothing more to delete on a second call.
  EXPECT_TRUE(prune_checkpoints(dir_.string(), keep, 50).empty());
}

TEST_F(CheckpointPolicyTest, ZeroKeepsEverything) {
  for (int64_t s : {1, 2, 3}) save(s);
  CheckpointRetention keep;  // keep_max 0
  EXPECT_TRUE(prune_checkpoints(dir_.string(), keep, 3).empty());
  EXPECT_EQ(remaining(), (Steps{1, 2, 3}));
}

TEST_F(CheckpointPolicyTest, KeepsBestPlusNewestN) {
  for (int64_t s : {10, 20, 30, 40, 50}) save(s);
  results({{10, 0.70, 0.5}, {20, 0.90, 0.3}, {30, 0.60, 0.2}, {40, 0.65, 0.6}, {50, 0.62, 0.7}});
  CheckpointRetention keep;
  keep.keep_max = 2;
  keep.keep_best = true;
  prune_checkpoints(dir_.string(), keep, 50);
  EXPECT_EQ(remaining(), (Steps{20, 40, 50}));  // N=2 newest + best auc (step 20)
}

TEST_F(CheckpointPolicyTest, SmallerIsBetterMetric) {
  for (int64_t s : {10, 20, 30, 40, 50}) save(s);
  results({{10, 0.70, 0.5}, {20, 0.90, 0.3}, {30, 0.60, 0.2}, {40, 0.65, 0.6}, {50, 0.62, 0.7}});
  CheckpointRetention keep;
  keep.keep_max = 1;
  keep.keep_best = true;
  keep.best_metric = "loss";
  keep.larger_is_better = false;
  prune_checkpoints(dir_.string(), keep, 50);
  EXPECT_EQ(remaining(), (Steps{30, 50}));
}

TEST_F(CheckpointPolicyTest, BestAmongNewestGivesExactlyN) {
  for (int64_t s : {10, 20, 30}) save(s);
  results({{10, 0.5, 0}, {20, 0.6, 0}, {30, 0.9, 0}});
  CheckpointRetention keep;
  keep.keep_max = 2;
  keep.keep_best = true;
  prune_checkpoints(dir_.string(), keep, 30);
  EXPECT_EQ(remaining(), (Steps{20, 30}));
}

TEST_F(CheckpointPolicyTest, BestOnlyAmongExistingCheckpoints) {
  // Step 5 had the best auc but its checkpoint is gone already; the best existing one is kept.
  for (int64_t s : {10, 20, 30, 40}) save(s);
  results({{5, 0.99, 0}, {10, 0.5, 0}, {20, 0.8, 0}, {30, 0.6, 0}, {40, 0.7, 0}});
  CheckpointRetention keep;
  keep.keep_max = 1;
  keep.keep_best = true;
  prune_checkpoints(dir_.string(), keep, 40);
  EXPECT_EQ(remaining(), (Steps{20, 40}));
}

TEST_F(CheckpointPolicyTest, NeverDeletesJustSaved) {
  for (int64_t s : {10, 20, 30}) save(s);
  CheckpointRetention keep;
  keep.keep_max = 1;
  prune_checkpoints(dir_.string(), keep, 10);  // step 10 was just (re)written
  EXPECT_EQ(remaining(), (Steps{10, 30}));
}

TEST_F(CheckpointPolicyTest, BestStepParsing) {
  const std::string path = (dir_ / "r.txt").string();
  EXPECT_FALSE(best_checkpoint_step(path, "auc", true, {1}).has_value());  // no file
  {
    std::ofstream out(path);
    out << "{\"global_step\": 1, \"auc\": 0.5}\n\n{\"global_step\": 2}\n{\"global_step\": 3, \"auc\": 0.5}\n";
  }
  // Ties keep the earlier step; lines without the metric are skipped.
  EXPECT_EQ(best_checkpoint_step(path, "auc", true, {1, 2, 3}), std::optional<int64_t>(1));
  EXPECT_EQ(best_checkpoint_step(path, "auc", true, {2, 3}), std::optional<int64_t>(3));
  EXPECT_FALSE(best_checkpoint_step(path, "auc", true, {2}).has_value());
  {
    std::ofstream out(path, std::ios::app);
    out << "not json\n";
  }
  try {
    best_checkpoint_step(path, "auc", true, {1});
    FAIL() << "expected CheckpointError";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":5"), std::string::npos) << e.what();
  }
}

TEST(CheckpointRetention, FromConfig) {
  auto config = config::load_pipeline_config(std::string(TZREC_SOURCE_DIR) +
                                             "/examples/deepfm_criteo_synth.config");
  auto keep = checkpoint_retention(config);
  EXPECT_EQ(keep.keep_max, 0);
  EXPECT_FALSE(keep.keep_best);
  EXPECT_EQ(keep.best_metric, "auc");
  EXPECT_TRUE(keep.larger_is_better);
  config.mutable_train_config()->set_keep_checkpoint_max(3);
  config.mutable_export_config()->set_exporter_type("best");
  config.mutable_export_config()->set_best_exporter_metric("loss");
  config.mutable_export_config()->set_metric_larger_is_better(false);
  keep = checkpoint_retention(config);
  EXPECT_EQ(keep.keep_max, 3);
  EXPECT_TRUE(keep.keep_best);
  EXPECT_EQ(keep.best_metric, "loss");
  EXPECT_FALSE(keep.larger_is_better);
}

}  // namespace checkpoint_policy_test
}  // namespace tzrec::train
