// Multi-rank TrainingSession runs (ranks as processes, Gloo on 127.0.0.1):
//   - a checkpoint resharded 1 → 2 (column_wise / table_wise) → 4 (row_wise) → 1 ranks comes back with the same
//     weights and optimizer state, predicts the same on every world size on the way, and training
//     continues exactly as if it had never left one process;
//   - fine_tune_checkpoint on two ranks loads each rank's table shards and their sparse optimizer
//     state from a single-process checkpoint, exactly what one process would load;
//   - enable_global_grad_clip: dense gradients are averaged over the ranks before the norm is
//     taken, so two ranks on half batches clip and step the dense parameters as one process on
//     the whole batch.
#include <cstdlib>
#include <filesystem>
#include <map>

#include <gtest/gtest.h>

#include "checkpoint/checkpoint.h"
#include "checkpoint/distributed_checkpoint.h"
#include "train/distributed_session_testing.h"
#include "train/fine_tune.h"

namespace tzrec::train {
namespace distributed_session_test {

namespace dt = dist::testing;


// Restores `from` on this world size (sharded as `sharding`), checks predictions against a
// single-process restore of the same checkpoint, and saves it again to `to`.
void reshard_stage(const protos::EasyRecConfig& config, const sparse::Batch& batch, const std::string& from,
                   const std::string& to, dist::ProcessGroup& pg) {
  auto pg_ptr = pg.shared_from_this();
  TrainingSession session(config, /*with_optimizers=*/true, pg_ptr);
  const auto ckpt = checkpointing::load_checkpoint(checkpointing::checkpoint_dir(from, 1), /*assemble_shards=*/false);
  session.restore(ckpt, /*restore_optimizer=*/true);
  TrainingSession single(config, /*with_optimizers=*/false);
  single.restore(checkpointing::load_checkpoint(checkpointing::checkpoint_dir(from, 1)), false);
  // Every rank predicts the whole batch: the sharded lookups serve all ranks' rows.
  const torch::Tensor sharded = predict_eval(session, batch);
  const torch::Tensor reference = predict_eval(single, batch);
  EXPECT_TRUE(torch::allclose(sharded, reference, 1e-6, 1e-6))
      << "rank " << pg.rank() << " of " << pg.world_size() << ": max diff "
      << (sharded - reference).abs().max().item<double>();
  save_distributed(session, to, 1, pg);
}

TEST_F(DistributedSessionTest, ReshardRoundTripOneTwoFourOne) {
  auto data = batches();
  ASSERT_EQ(data.size(), 4u);
  const std::string ckpt1 = shared_dir() + "/w1", ckpt2 = shared_dir() + "/w2", ckpt4 = shared_dir() + "/w4";
  std::unique_ptr<TrainingSession> original;
  if (!dt::is_rank_worker()) {
    torch::manual_seed(1);
    original = std::make_unique<TrainingSession>(config_, true);
    for (int i = 0; i < 2; ++i) train_on(*original, data[i], i);
    checkpointing::save_checkpoint(ckpt1, snapshot(*original, 1));
  }
  if (in_stage("2")) {
    set_sharding({"column_wise", "table_wise"});  // the 4-d wide tables cannot be split in columns
    dt::expect_all_succeeded(dt::run_ranks(2, [&](dist::ProcessGroup& pg) {
      reshard_stage(config_, data[3], ckpt1, ckpt2, pg);
    }, options("2")));
  }
  if (in_stage("4")) {
    set_sharding({"row_wise"});
    dt::expect_all_succeeded(dt::run_ranks(4, [&](dist::ProcessGroup& pg) {
      reshard_stage(config_, data[3], ckpt2, ckpt4, pg);
    }, options("4")));
  }
  if (dt::is_rank_worker()) return;
  ASSERT_TRUE(std::filesystem::exists(checkpointing::checkpoint_dir(ckpt4, 1) + "/model-000003-of-000004.safetensors"));
  torch::manual_seed(5);  // other initial weights: everything must come from the checkpoint
  TrainingSession back(config_, true);
  back.restore(checkpointing::load_checkpoint(checkpointing::checkpoint_dir(ckpt4, 1)), true);
  back.set_schedule_position(2, 0);
  // The same weights and optimizer state as before the round trip, exactly.
  auto original_tensors = original->model_tensors();
  auto back_tensors = back.model_tensors();
  ASSERT_EQ(original_tensors.size(), back_tensors.size());
  for (size_t i = 0; i < original_tensors.size(); ++i) {
    EXPECT_EQ(original_tensors[i].first, back_tensors[i].first);
    EXPECT_TRUE(torch::equal(original_tensors[i].second, back_tensors[i].second)) << original_tensors[i].first;
  }
  const auto original_state = original->optimizer_state();
  const auto back_state = back.optimizer_state();
  ASSERT_EQ(original_state.size(), back_state.size());
  for (const auto& [key, value] : original_state) {
    ASSERT_EQ(back_state.count(key), 1u) << key;
    EXPECT_TRUE(torch::equal(value, back_state.at(key))) << key;
  }
  // And training continues identically.
  for (int i = 2; i < 4; ++i) {
    train_on(*original, data[i], i);
    train_on(back, data[i], i);
  }
  EXPECT_TRUE(torch::equal(predict_eval(*original, data[0]), predict_eval(back, data[0])));
}

TEST_F(DistributedSessionTest, GlobalGradClipAveragesOverRanksBeforeTheNorm) {
  auto* clip = config_.mutable_train_config()->mutable_grad_clipping();
  clip->set_clipping_type("norm");
  clip->set_max_gradient(0.05);  // far below the gradient norm of a fresh model: clipping is active
  clip->set_enable_global_grad_clip(true);
  const std::string start_dir = shared_dir() + "/start", expected_dir = shared_dir() + "/expected";
  if (!dt::is_rank_worker()) {
    torch::manual_seed(7);
    TrainingSession single(config_, true);
    checkpointing::save_checkpoint(start_dir, snapshot(single, 0));
    train_on(single, batches()[0], 0);  // rows 0..127
    checkpointing::save_checkpoint(expected_dir, snapshot(single, 0));
  }
  config_.mutable_data_config()->set_batch_size(64);
  const auto halves = batches();  // rows 0..63, 64..127, ...
  dt::expect_all_succeeded(dt::run_ranks(2, [&](dist::ProcessGroup& pg) {
    TrainingSession session(config_, true, pg.shared_from_this());
    session.restore(checkpointing::load_checkpoint(checkpointing::checkpoint_dir(start_dir, 0), false), true);  // the same start
    train_on(session, halves[static_cast<size_t>(pg.rank())], 0);
    const auto expected = checkpointing::load_checkpoint(checkpointing::checkpoint_dir(expected_dir, 0));
    int compared = 0;
    for (auto& [name, tensor] : session.model().dense_parameters()) {
      ASSERT_EQ(expected.model.count(name), 1u) << name;
      EXPECT_TRUE(torch::allclose(tensor, expected.model.at(name), 1e-5, 1e-6))
          << name << " on rank " << pg.rank() << ": max diff "
          << (tensor - expected.model.at(name)).abs().max().item<double>();
      ++compared;
    }
    EXPECT_GT(compared, 4);
  }, options("clip")));
}

// `full` cut to a block's region.
torch::Tensor region(const torch::Tensor& full, const checkpointing::TensorBlock& block) {
  if (full.dim() == 0) return full;
  torch::Tensor out = full.narrow(0, block.row_offset, block.value.size(0));
  if (full.dim() == 2) out = out.narrow(1, block.col_offset, block.value.size(1));
  return out;
}

TEST_F(DistributedSessionTest, FineTuneOnTwoRanksLoadsShardsAndTheirOptimizerState) {
  auto data = batches();
  const std::string source = shared_dir() + "/pretrained";
  if (!dt::is_rank_worker()) {
    torch::manual_seed(1);
    TrainingSession trained(config_, true);
    for (int i = 0; i < 2; ++i) train_on(trained, data[i], i);
    checkpointing::save_checkpoint(source, snapshot(trained, 1));
  }
  set_sharding({"row_wise"});
  dt::expect_all_succeeded(dt::run_ranks(2, [&](dist::ProcessGroup& pg) {
    auto [session_ptr, single_ptr] = fine_tune_on_rank_and_alone(config_, source, pg, /*single_with_optimizers=*/true);
    TrainingSession& session = *session_ptr;
    TrainingSession& single = *single_ptr;
    EXPECT_TRUE(torch::allclose(predict_eval(session, data[3]), predict_eval(single, data[3]), 1e-6, 1e-6));
    // Every block this rank holds equals that region of the single process's tensors.
    const auto blocks = session.checkpoint_blocks();
    ASSERT_FALSE(blocks.model.empty());
    ASSERT_FALSE(blocks.optimizer.empty());
    std::map<std::string, torch::Tensor> single_model;
    for (auto& [name, tensor] : single.model_tensors()) single_model.emplace(name, tensor);
    for (const auto& b : blocks.model) {
      ASSERT_EQ(single_model.count(b.name), 1u) << b.name;
      EXPECT_TRUE(torch::equal(b.value, region(single_model.at(b.name), b))) << b.name;
    }
    const auto single_state = single.optimizer_state();
    for (const auto& b : blocks.optimizer) {
      ASSERT_EQ(single_state.count(b.name), 1u) << b.name;
      EXPECT_TRUE(torch::equal(b.value, region(single_state.at(b.name), b))) << b.name;
    }
    // The dense optimizer state too (Adam's moments after two steps).
    for (const auto& [key, value] : session.optimizer_state()) {
      ASSERT_EQ(single_state.count(key), 1u) << key;
      EXPECT_TRUE(torch::equal(value, single_state.at(key))) << key;
    }
  }, options("finetune")));
}

}  // namespace distributed_session_test
}  // namespace tzrec::train
