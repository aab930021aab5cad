// Test fixture shared by the TrainingSession tests: the DeepFM example config pointed at a small
// synthetic Criteo CSV in a per-test temporary directory, batches of 128 rows.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/pipeline_config.h"
#include "data/synthetic_criteo.h"
#include "feature/batch_loader.h"
#include "checkpoint/checkpoint.h"
#include "train/training_session.h"

namespace tzrec::train {

class SyntheticDeepFmTest : public ::testing::Test {
 protected:
  explicit SyntheticDeepFmTest(int64_t num_rows) : num_rows_(num_rows) {}

  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tzrec_session_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    data::SyntheticCriteoOptions options;
    options.num_rows = num_rows_;
    data::write_synthetic_criteo_parquet((dir_ / "train.parquet").string(), options);
    config_ = config::load_pipeline_config(std::string(TZREC_SOURCE_DIR) +
                                           "/examples/deepfm_criteo_synth.config");
    config_.set_train_input_path((dir_ / "train.parquet").string());
    config_.set_model_dir((dir_ / "model").string());
    config_.mutable_data_config()->set_batch_size(128);
    // One reader: batches hold consecutive rows whatever the batch size.
    config_.mutable_data_config()->set_num_workers(1);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Every training batch of the current config, in loader order.
  std::vector<sparse::Batch> batches() {
    feature::BatchLoader loader(config_, config_.train_input_path(), feature::Mode::kTrain);
    std::vector<sparse::Batch> out;
    while (auto loaded = loader.next()) out.push_back(loaded->batch);
    return out;
  }

  // One training step as the trainer runs it (single loss).
  static void train_on(TrainingSession& session, const sparse::Batch& batch, int64_t step) {
    auto predictions = session.model().predict(batch);
    session.backward_and_step(session.model().loss(predictions, batch).begin()->second, step);
    session.advance_step_schedules();
  }

  // Model tensors and optimizer state copied into a CheckpointData of `step`.
  static checkpointing::CheckpointData snapshot(TrainingSession& session, int64_t step) {
    checkpointing::CheckpointData data;
    data.step = step;
    for (auto& [name, tensor] : session.model_tensors()) data.model.emplace(name, tensor.clone());
    for (auto& [name, tensor] : session.optimizer_state()) data.optimizer.emplace(name, tensor.clone());
    return data;
  }

  std::filesystem::path dir_;
  protos::EasyRecConfig config_;

 private:
  int64_t num_rows_;
};

}  // namespace tzrec::train
