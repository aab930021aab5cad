// Checkpoint round trip through a real TrainingSession: a restored model predicts exactly what
// the saved one did, and restored optimizer state continues training identically.
#include "train/training_session.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "config/pipeline_config.h"
#include "data/synthetic_criteo.h"
#include "feature/batch_loader.h"
#include "train/checkpoint.h"

namespace tzrec::train {
namespace {

namespace fs = std::filesystem;

class TrainingSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tzrec_session_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    data::SyntheticCriteoOptions options;
    options.num_rows = 512;
    data::write_synthetic_criteo_csv((dir_ / "train.csv").string(), options);
    config_ = config::load_pipeline_config(std::string(TZREC_SOURCE_DIR) +
                                           "/examples/deepfm_criteo_synth.config");
    config_.set_train_input_path((dir_ / "train.csv").string());
    config_.set_model_dir((dir_ / "model").string());
    config_.mutable_data_config()->set_batch_size(128);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<sparse::Batch> batches() {
    feature::BatchLoader loader(config_, config_.train_input_path(), feature::Mode::kTrain);
    std::vector<sparse::Batch> out;
    while (auto loaded = loader.next()) out.push_back(loaded->batch);
    return out;
  }

  static void train_on(TrainingSession& session, const sparse::Batch& batch) {
    session.zero_grad();
    auto predictions = session.model().predict(batch);
    session.model().loss(predictions, batch).begin()->second.backward();
    session.optimizer_step();
  }

  static CheckpointData snapshot(TrainingSession& session, int64_t step) {
    CheckpointData data;
    data.step = step;
    for (auto& [name, tensor] : session.model_tensors()) data.model.emplace(name, tensor.clone());
    for (auto& [name, tensor] : session.optimizer_state()) data.optimizer.emplace(name, tensor.clone());
    return data;
  }

  fs::path dir_;
  protos::EasyRecConfig config_;
};

TEST_F(TrainingSessionTest, RestoredModelPredictsIdentically) {
  auto data = batches();
  ASSERT_EQ(data.size(), 4u);
  torch::manual_seed(1);
  TrainingSession trained(config_, true);
  for (int i = 0; i < 3; ++i) train_on(trained, data[i]);
  save_checkpoint(config_.model_dir(), snapshot(trained, 2));

  torch::manual_seed(2);  // different initial weights
  TrainingSession restored(config_, false);
  trained.model().eval();
  restored.model().eval();
  torch::NoGradGuard no_grad;
  auto before = restored.model().predict(data[3])["probs"].clone();
  restored.restore(load_checkpoint(checkpoint_dir(config_.model_dir(), 2)), false);
  auto expected = trained.model().predict(data[3])["probs"];
  auto actual = restored.model().predict(data[3])["probs"];
  EXPECT_FALSE(torch::equal(before, expected));
  EXPECT_TRUE(torch::equal(actual, expected));
}

TEST_F(TrainingSessionTest, RestoredOptimizerContinuesIdentically) {
  auto data = batches();
  torch::manual_seed(1);
  TrainingSession a(config_, true);
  for (int i = 0; i < 2; ++i) train_on(a, data[i]);
  save_checkpoint(config_.model_dir(), snapshot(a, 1));

  torch::manual_seed(3);
  TrainingSession b(config_, true);
  b.restore(load_checkpoint(checkpoint_dir(config_.model_dir(), 1)), true);
  for (int i = 2; i < 4; ++i) {
    train_on(a, data[i]);
    train_on(b, data[i]);
  }
  auto ta = a.model_tensors();
  auto tb = b.model_tensors();
  ASSERT_EQ(ta.size(), tb.size());
  for (size_t i = 0; i < ta.size(); ++i) {
    EXPECT_TRUE(torch::equal(ta[i].second, tb[i].second)) << ta[i].first;
  }
  auto sa = a.optimizer_state();
  auto sb = b.optimizer_state();
  ASSERT_EQ(sa.size(), sb.size());
  for (const auto& [name, tensor] : sa) EXPECT_TRUE(torch::equal(tensor, sb.at(name))) << name;
}

TEST_F(TrainingSessionTest, IgnoringOptimizerStateDiverges) {
  auto data = batches();
  torch::manual_seed(1);
  TrainingSession a(config_, true);
  for (int i = 0; i < 2; ++i) train_on(a, data[i]);
  save_checkpoint(config_.model_dir(), snapshot(a, 1));
  TrainingSession b(config_, true);
  b.restore(load_checkpoint(checkpoint_dir(config_.model_dir(), 1)), /*restore_optimizer=*/false);
  train_on(a, data[2]);
  train_on(b, data[2]);
  bool any_differs = false;
  auto ta = a.model_tensors();
  auto tb = b.model_tensors();
  for (size_t i = 0; i < ta.size(); ++i) any_differs |= !torch::equal(ta[i].second, tb[i].second);
  EXPECT_TRUE(any_differs);
}

}  // namespace
}  // namespace tzrec::train
