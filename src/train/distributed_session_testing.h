// Fixture and helpers shared by the multi-rank TrainingSession tests: the synthetic DeepFM of
// training_session_testing.h run in stages of rank processes (dist/testing_multiprocess.h) that
// share the launching process's directory.
#pragma once

#include <cstdlib>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "checkpoint/checkpoint.h"
#include "checkpoint/distributed_checkpoint.h"
#include "dist/testing_multiprocess.h"
#include "train/fine_tune.h"
#include "train/training_session.h"
#include "train/training_session_testing.h"

namespace tzrec::train {

namespace dt = dist::testing;
inline constexpr const char* kSharedDirVariable = "TZREC_TEST_SHARED_DIR";
inline constexpr const char* kStageVariable = "TZREC_TEST_STAGE";

class DistributedSessionTest : public SyntheticDeepFmTest {
 protected:
  DistributedSessionTest() : SyntheticDeepFmTest(512) {}

  // The launching process's directory (workers get it through the environment).
  std::string shared_dir() const {
    const char* v = std::getenv(kSharedDirVariable);
    return v != nullptr ? v : dir_.string();
  }
  // Whether this process takes part in `stage`: the launcher runs every stage, a worker only the
  // one it was started for.
  static bool in_stage(const std::string& stage) {
    const char* v = std::getenv(kStageVariable);
    return !dt::is_rank_worker() || (v != nullptr && stage == v);
  }
  dt::RankOptions options(const std::string& stage) const {
    dt::RankOptions o;
    o.timeout = std::chrono::seconds(300);
    o.env = {{kSharedDirVariable, dir_.string()}, {kStageVariable, stage}};
    return o;
  }
  void set_sharding(const std::vector<std::string>& types) {
    auto* c = config_.mutable_train_config()->mutable_global_embedding_constraints();
    c->clear_sharding_types();
    for (const auto& t : types) c->add_sharding_types(t);
  }
};

// Probabilities of `batch` in eval mode.
inline torch::Tensor predict_eval(TrainingSession& session, const sparse::Batch& batch) {
  session.model().eval();
  torch::NoGradGuard no_grad;
  torch::Tensor p = session.model().predict(batch)["probs"].clone();
  session.model().train();
  return p;
}

// A distributed session's tensors as a checkpoint of `step` (dense whole, tables as blocks).
inline void save_distributed(TrainingSession& session, const std::string& model_dir, int64_t step, dist::ProcessGroup& pg) {
  checkpointing::CheckpointData data;
  data.step = step;
  for (auto& [name, tensor] : session.model_tensors()) data.model.emplace(name, tensor);
  data.optimizer = session.optimizer_state();
  checkpointing::save_distributed_checkpoint(model_dir, data, session.checkpoint_blocks(),
                              session.sharded_embeddings()->plan().to_json(), pg);
}

// fine_tune_restore of the checkpoints in `source` on this rank and on one process (built with
// optimizers when `single_with_optimizers`); checks that the rank found every model tensor and
// restored the optimizer state. Returns {the rank's session, the one-process session}.
inline std::pair<std::unique_ptr<TrainingSession>, std::unique_ptr<TrainingSession>> fine_tune_on_rank_and_alone(
    const protos::EasyRecConfig& config, const std::string& source, dist::ProcessGroup& pg,
    bool single_with_optimizers) {
  FineTuneOptions options;
  options.checkpoint_path = source;
  torch::manual_seed(3);
  auto session = std::make_unique<TrainingSession>(config, true, pg.shared_from_this());
  const FineTuneResult result = fine_tune_restore(*session, options);
  EXPECT_TRUE(result.model.missing.empty());
  EXPECT_TRUE(result.optimizer_restored);
  auto single = std::make_unique<TrainingSession>(config, single_with_optimizers);
  fine_tune_restore(*single, options);
  return {std::move(session), std::move(single)};
}

}  // namespace tzrec::train
