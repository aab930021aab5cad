// Fixture and helpers shared by the multi-rank TrainingSession tests: the synthetic DeepFM of
// training_session_testing.h run in stages of rank processes (dist/testing_multiprocess.h) that
// share the launching process's directory.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "checkpoint/checkpoint.h"
#include "checkpoint/distributed_checkpoint.h"
#include "dist/testing_multiprocess.h"
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

}  // namespace tzrec::train
