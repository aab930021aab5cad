// fine_tune_checkpoint: partial loading, the parameter-name map and when optimizer state follows.
#include "train/fine_tune.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "base/error.h"
#include "config/pipeline_config.h"
#include "data/synthetic_criteo.h"
#include "feature/batch_loader.h"

namespace tzrec::train {
namespace fine_tune_test {

namespace fs = std::filesystem;

fs::path test_dir() {
  return fs::temp_directory_path() / ("tzrec_fine_tune_test_" + std::to_string(::getpid()) + "_" +
                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(ParamMap, ParsesLinesCommentsAndBlanks) {
  const fs::path dir = test_dir();
  fs::create_directories(dir);
  write_file(dir / "map", "# new old\n\n  tower.w   old.tower.w \n\ttower.b\told.b\n   \n");
  const auto map = read_param_map((dir / "map").string());
  EXPECT_EQ(map, (std::map<std::string, std::string>{{"tower.w", "old.tower.w"}, {"tower.b", "old.b"}}));

  write_file(dir / "bad", "a b\nc\n");
  std::string msg = error_of([&] { read_param_map((dir / "bad").string()); });
  EXPECT_NE(msg.find((dir / "bad").string() + ":2"), std::string::npos) << msg;
  write_file(dir / "three", "a b c\n");
  msg = error_of([&] { read_param_map((dir / "three").string()); });
  EXPECT_NE(msg.find(":1"), std::string::npos) << msg;
  write_file(dir / "dup", "a b\na c\n");
  msg = error_of([&] { read_param_map((dir / "dup").string()); });
  EXPECT_NE(msg.find(":2: parameter 'a' is mapped twice"), std::string::npos) << msg;
  EXPECT_THROW(read_param_map((dir / "absent").string()), ConfigError);
  fs::remove_all(dir);
}

TEST(LoadPartial, MapsSkipsMissingAndCopiesInPlace) {
  const torch::Tensor a = torch::zeros({2, 3});
  const torch::Tensor b = torch::zeros({4});
  const torch::Tensor c = torch::full({1}, 7.0);
  const std::map<std::string, torch::Tensor> stored = {
      {"a", torch::arange(6, torch::kFloat).reshape({2, 3})},
      {"b", torch::full({4}, -1.0)},  // same name, but the map points b elsewhere
      {"old_b", torch::full({4}, 5.0)},
      {"unused", torch::ones({9})}};
  auto result = load_partial(stored, {{"a", a}, {"b", b}, {"c", c}}, {{"b", "old_b"}});
  EXPECT_TRUE(torch::equal(a, torch::arange(6, torch::kFloat).reshape({2, 3})));
  EXPECT_TRUE(torch::equal(b, torch::full({4}, 5.0)));  // the mapped tensor, not stored["b"]
  EXPECT_TRUE(torch::equal(c, torch::full({1}, 7.0)));  // missing → untouched
  EXPECT_EQ(result.loaded, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(result.missing, (std::vector<std::string>{"c"}));
}

TEST(LoadPartial, ShapeMismatchNamesBothShapesAndCopiesNothing) {
  const torch::Tensor a = torch::zeros({2});
  const torch::Tensor b = torch::zeros({3});
  const std::string msg = error_of([&] {
    load_partial({{"a", torch::ones({2})}, {"old", torch::ones({4})}}, {{"a", a}, {"b", b}}, {{"b", "old"}});
  });
  EXPECT_NE(msg.find("'b' (checkpoint 'old') has shape [3] in the model but [4] in the checkpoint"),
            std::string::npos)
      << msg;
  EXPECT_TRUE(torch::equal(a, torch::zeros({2})));
  EXPECT_THROW(load_partial({{"a", torch::ones({2}, torch::kDouble)}}, {{"a", a}}, {}), CheckpointError);
  EXPECT_THROW(load_partial({{"a", torch::ones({2})}}, {{"a", a}}, {{"typo", "a"}}), ConfigError);
}

class FineTuneSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_dir();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    data::SyntheticCriteoOptions options;
    options.num_rows = 256;
    data::write_synthetic_criteo_parquet((dir_ / "train.parquet").string(), options);
    config_ = config::load_pipeline_config(std::string(TZREC_SOURCE_DIR) +
                                           "/examples/deepfm_criteo_synth.config");
    config_.set_train_input_path((dir_ / "train.parquet").string());
    config_.mutable_data_config()->set_batch_size(128);
    // A trained source model (2 steps, so every optimizer has state) saved as model.ckpt-1.
    torch::manual_seed(1);
    TrainingSession source(config_, true);
    feature::BatchLoader loader(config_, config_.train_input_path(), feature::Mode::kTrain);
    int64_t step = 0;
    while (auto loaded = loader.next()) {
      auto predictions = source.model().predict(loaded->batch);
      source.backward_and_step(source.model().loss(predictions, loaded->batch).begin()->second, step++);
    }
    ASSERT_EQ(step, 2);
    saved_.step = 1;
    for (auto& [name, t] : source.model_tensors()) saved_.model.emplace(name, t.clone());
    for (auto& [name, t] : source.optimizer_state()) saved_.optimizer.emplace(name, t.clone());
    for (auto& [name, t] : source.model_tensors()) {
      if (t.is_floating_point() && t.dim() == 2 && name.find("embedding") == std::string::npos) {
        if (mapped_.empty()) {
          mapped_ = name;
        } else if (dropped_.empty()) {
          dropped_ = name;
        }
      }
    }
    ASSERT_FALSE(mapped_.empty());
    ASSERT_FALSE(dropped_.empty());
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::map<std::string, torch::Tensor> tensors(TrainingSession& s) {
    std::map<std::string, torch::Tensor> out;
    for (auto& [name, t] : s.model_tensors()) out.emplace(name, t.clone());
    return out;
  }
  // A copy: optimizer_state() returns the live tensors.
  static std::map<std::string, torch::Tensor> optimizer_copy(TrainingSession& s) {
    std::map<std::string, torch::Tensor> out;
    for (auto& [name, t] : s.optimizer_state()) out.emplace(name, t.clone());
    return out;
  }

  fs::path dir_;
  protos::EasyRecConfig config_;
  checkpointing::CheckpointData saved_;
  std::string mapped_;   // stored under "old/<name>" in the remapped checkpoint
  std::string dropped_;  // absent from the remapped checkpoint
};

TEST_F(FineTuneSessionTest, FullCheckpointRestoresModelAndOptimizer) {
  checkpointing::save_checkpoint((dir_ / "src").string(), saved_);
  torch::manual_seed(2);
  TrainingSession target(config_, true);
  FineTuneOptions options;
  options.checkpoint_path = (dir_ / "src").string();  // a model_dir → its latest checkpoint
  auto result = fine_tune_restore(target, options);
  EXPECT_EQ(result.checkpoint_dir, checkpointing::checkpoint_dir((dir_ / "src").string(), 1));
  EXPECT_TRUE(result.model.missing.empty());
  EXPECT_TRUE(result.optimizer_restored);
  for (auto& [name, t] : target.model_tensors()) EXPECT_TRUE(torch::equal(t, saved_.model.at(name))) << name;
  const auto state = target.optimizer_state();
  ASSERT_EQ(state.size(), saved_.optimizer.size());
  for (auto& [name, t] : state) EXPECT_TRUE(torch::equal(t, saved_.optimizer.at(name))) << name;
}

TEST_F(FineTuneSessionTest, IgnoreRestoreOptimizer) {
  checkpointing::save_checkpoint((dir_ / "src").string(), saved_);
  torch::manual_seed(2);
  TrainingSession target(config_, true);
  const auto fresh_state = optimizer_copy(target);
  FineTuneOptions options;
  options.checkpoint_path = checkpointing::checkpoint_dir((dir_ / "src").string(), 1);
  options.restore_optimizer = false;
  auto result = fine_tune_restore(target, options);
  EXPECT_FALSE(result.optimizer_restored);
  const auto state = target.optimizer_state();
  EXPECT_EQ(state.size(), fresh_state.size());
  for (auto& [name, t] : state) EXPECT_TRUE(torch::equal(t, fresh_state.at(name))) << name;
  for (auto& [name, t] : target.model_tensors()) EXPECT_TRUE(torch::equal(t, saved_.model.at(name))) << name;
}

TEST_F(FineTuneSessionTest, ParamMapLoadsMappedTensorAndSkipsMissing) {
  checkpointing::CheckpointData renamed = saved_;
  renamed.model.erase(mapped_);
  renamed.model.erase(dropped_);
  renamed.model.emplace("old/" + mapped_, saved_.model.at(mapped_));
  checkpointing::save_checkpoint((dir_ / "src").string(), renamed);
  write_file(dir_ / "map", "# current checkpoint\n" + mapped_ + " old/" + mapped_ + "\n");

  torch::manual_seed(2);
  TrainingSession target(config_, true);
  const auto before = tensors(target);
  ASSERT_FALSE(torch::equal(before.at(mapped_), saved_.model.at(mapped_)));
  const auto fresh_state = optimizer_copy(target);
  FineTuneOptions options;
  options.checkpoint_path = (dir_ / "src").string();
  options.param_map_path = (dir_ / "map").string();
  auto result = fine_tune_restore(target, options);

  const auto after = tensors(target);
  EXPECT_TRUE(torch::equal(after.at(mapped_), saved_.model.at(mapped_)));  // via the map
  EXPECT_TRUE(torch::equal(after.at(dropped_), before.at(dropped_)));       // skipped, as built
  EXPECT_FALSE(torch::equal(after.at(dropped_), saved_.model.at(dropped_)));
  EXPECT_EQ(result.model.missing, (std::vector<std::string>{dropped_}));
  for (auto& [name, t] : after) {
    if (name != dropped_) EXPECT_TRUE(torch::equal(t, saved_.model.at(name))) << name;
  }
  // Names were remapped, so the optimizer state stays fresh.
  EXPECT_FALSE(result.optimizer_restored);
  for (auto& [name, t] : target.optimizer_state()) EXPECT_TRUE(torch::equal(t, fresh_state.at(name))) << name;
}

TEST_F(FineTuneSessionTest, IncompatibleOptimizerStateIsSkipped) {
  checkpointing::CheckpointData other = saved_;
  other.optimizer.clear();
  other.optimizer.emplace("dense.no_such_param.exp_avg", torch::zeros({1}));
  checkpointing::save_checkpoint((dir_ / "src").string(), other);
  TrainingSession target(config_, true);
  FineTuneOptions options;
  options.checkpoint_path = (dir_ / "src").string();
  auto result = fine_tune_restore(target, options);
  EXPECT_FALSE(result.optimizer_restored);
  EXPECT_TRUE(result.model.missing.empty());
}

TEST_F(FineTuneSessionTest, NoCheckpointIsAnError) {
  TrainingSession target(config_, true);
  FineTuneOptions options;
  options.checkpoint_path = (dir_ / "empty").string();
  EXPECT_THROW(fine_tune_restore(target, options), CheckpointError);
}

}  // namespace fine_tune_test
}  // namespace tzrec::train
