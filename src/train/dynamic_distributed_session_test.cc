// Dynamic embedding tables across ranks (embedding/dynamic_embedding_bag_collection.h,
// docs/tzrec-compatibility.md §5.13), TrainingSession end to end with ranks as processes:
//   - two ranks train on their own batches (ids routed to the rank owning them, each rank's table
//     in its own row block) and checkpoint; the checkpoint restored on three ranks and on one
//     process predicts exactly what it predicted on two (no table fills up, so every id keeps its
//     weights; ids below the admission threshold read the evaluation constant everywhere);
//   - saved again from three ranks and from one process (with the optimizer state), every id keeps
//     its weight row and its sparse optimizer state, compared id by id with the two-rank
//     checkpoint read independently from the files (rows: block r·(R + 2) + row of the state).
//   - fine_tune_checkpoint on two ranks from a one-process checkpoint loads every id's weights and
//     optimizer state into the rank owning it, and predicts what one process fine-tuned from it does.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "checkpoint/sharded_checkpoint.h"
#include "embedding/id_owner.h"
#include "train/distributed_session_testing.h"
#include "train/fine_tune.h"

namespace tzrec::train {
namespace dynamic_distributed_session_test {

namespace dt = dist::testing;

class DynamicDistributedSessionTest : public DistributedSessionTest {
 protected:
  void SetUp() override {
    DistributedSessionTest::SetUp();
    // Three categorical features get dynamic tables far larger than their ids; one per score
    // strategy, one with frequency admission.
    for (auto& fc : *config_.mutable_feature_configs()) {
      if (!fc.has_id_feature()) continue;
      auto* f = fc.mutable_id_feature();
      auto* d = f->mutable_dynamicemb();
      d->set_max_capacity(4096);
      d->set_bucket_capacity(64);
      if (f->feature_name() == "cat_1") {
        d->set_score_strategy("LFU");
      } else if (f->feature_name() == "cat_2") {
        d->set_score_strategy("NO_EVICTION");
        d->mutable_frequency_admission_strategy()->set_threshold(2);
      } else if (f->feature_name() != "cat_0") {
        f->clear_dynamicemb();
      }
    }
  }
};

constexpr const char* kPrefix = "embedding_group.emb_impls.__BASE__.dynamicemb_ebc.";

struct IdRows {
  int64_t block;  // the rank whose block holds the id
  torch::Tensor weight;
  torch::Tensor momentum;
};

// id → its rows of table `table` in checkpoint `dir`, read from the files (any world size): the
// state has W blocks of R rows, the weight W blocks of R + 2.
std::map<int64_t, IdRows> rows_by_id(const std::string& dir, const std::string& table) {
  const checkpointing::CheckpointTensorIndex index(dir);
  const std::string state = std::string(kPrefix) + "dynamic_tables." + table;
  const torch::Tensor keys = index.read_whole(state + ".row_keys");
  const torch::Tensor live = index.read_whole(state + ".row_live");
  const torch::Tensor weight = index.read_whole(std::string(kPrefix) + "_embedding_module.embedding_bags." + table + ".weight");
  const torch::Tensor momentum = index.read_whole("sparse." + table + ".momentum1");
  const int64_t state_rows = keys.numel();
  const int64_t world = (weight.size(0) - state_rows) / 2;
  const int64_t rows = state_rows / world;
  std::map<int64_t, IdRows> out;
  for (int64_t i = 0; i < state_rows; ++i) {
    if (live[i].item<int>() == 0) continue;
    const int64_t row = (i / rows) * (rows + 2) + i % rows;
    out.emplace(keys[i].item<int64_t>(), IdRows{i / rows, weight[row].clone(), momentum[row].clone()});
  }
  return out;
}

TEST_F(DynamicDistributedSessionTest, TablesRestoreOnAnyWorldSizeWithIdenticalLookups) {
  auto data = batches();
  ASSERT_EQ(data.size(), 4u);
  const std::string ckpt2 = shared_dir() + "/w2", ckpt3 = shared_dir() + "/w3", ckpt1 = shared_dir() + "/w1";
  if (in_stage("2")) {
    dt::expect_all_succeeded(dt::run_ranks(2, [&](dist::ProcessGroup& pg) {
      torch::manual_seed(1);
      TrainingSession session(config_, /*with_optimizers=*/true, pg.shared_from_this());
      for (int step = 0; step < 2; ++step) train_on(session, data[2 * step + pg.rank()], step);
      EXPECT_EQ(session.sharded_embeddings()->plan().table("cat_0_emb").type, dist::ShardingType::kRowWise);
      save_distributed(session, ckpt2, 2, pg);
    }, options("2")));
  }
  if (in_stage("3")) {
    dt::expect_all_succeeded(dt::run_ranks(3, [&](dist::ProcessGroup& pg) {
      torch::manual_seed(2);  // other initial weights: everything must come from the checkpoint
      TrainingSession session(config_, /*with_optimizers=*/true, pg.shared_from_this());
      session.restore(checkpointing::load_checkpoint(checkpointing::checkpoint_dir(ckpt2, 2), false), true);
      TrainingSession single(config_, /*with_optimizers=*/false);
      single.restore(checkpointing::load_checkpoint(checkpointing::checkpoint_dir(ckpt2, 2)), false);
      for (int b = 0; b < 4; ++b) {
        const torch::Tensor sharded = predict_eval(session, data[b]);
        const torch::Tensor reference = predict_eval(single, data[b]);
        EXPECT_TRUE(torch::allclose(sharded, reference, 1e-6, 1e-6))
            << "batch " << b << ", rank " << pg.rank() << " of 3: max diff "
            << (sharded - reference).abs().max().item<double>();
      }
      save_distributed(session, ckpt3, 2, pg);
    }, options("3")));
  }
  if (dt::is_rank_worker()) return;
  torch::manual_seed(3);
  TrainingSession one(config_, /*with_optimizers=*/true);
  one.restore(checkpointing::load_checkpoint(checkpointing::checkpoint_dir(ckpt2, 2)), true);
  checkpointing::save_checkpoint(ckpt1, snapshot(one, 2));
  for (const char* table : {"cat_0_emb", "cat_1_emb", "cat_2_emb", "cat_2_emb_wide"}) {
    const auto two = rows_by_id(checkpointing::checkpoint_dir(ckpt2, 2), table);
    EXPECT_GT(two.size(), 50u) << table;
    for (const std::string& dir : {checkpointing::checkpoint_dir(ckpt3, 2), checkpointing::checkpoint_dir(ckpt1, 2)}) {
      const auto other = rows_by_id(dir, table);
      ASSERT_EQ(two.size(), other.size()) << table << " in " << dir;
      for (const auto& [id, rows] : two) {
        EXPECT_EQ(rows.block, embedding::id_owner_rank(id, 2)) << table << " id " << id;
        ASSERT_EQ(other.count(id), 1u) << table << " id " << id << " in " << dir;
        EXPECT_TRUE(torch::equal(rows.weight, other.at(id).weight)) << table << " weight of id " << id << " in " << dir;
        EXPECT_TRUE(torch::equal(rows.momentum, other.at(id).momentum))
            << table << " accumulator of id " << id << " in " << dir;
      }
    }
  }
  // Ids seen once are below cat_2's admission threshold: counted, not held.
  const checkpointing::CheckpointTensorIndex index(checkpointing::checkpoint_dir(ckpt2, 2));
  const torch::Tensor counts = index.read_whole(std::string(kPrefix) + "dynamic_tables.cat_2_emb.admission_counts");
  EXPECT_GT(counts.gt(0).sum().item<int64_t>(), 0);
  TrainingSession from_three(config_, false);
  from_three.restore(checkpointing::load_checkpoint(checkpointing::checkpoint_dir(ckpt3, 2)), false);
  EXPECT_TRUE(torch::allclose(predict_eval(one, data[3]), predict_eval(from_three, data[3]), 1e-6, 1e-6));
}

// fine_tune_checkpoint on two ranks from a one-process checkpoint: each rank takes the ids it owns
// with their weights and optimizer state, and predicts what one process fine-tuned from it does.
TEST_F(DynamicDistributedSessionTest, FineTuneOnTwoRanksFromOneProcess) {
  auto data = batches();
  const std::string source = shared_dir() + "/pretrained", tuned = shared_dir() + "/tuned";
  if (!dt::is_rank_worker()) {
    torch::manual_seed(1);
    TrainingSession trained(config_, true);
    for (int i = 0; i < 4; ++i) train_on(trained, data[i], i);
    checkpointing::save_checkpoint(source, snapshot(trained, 3));
  }
  dt::expect_all_succeeded(dt::run_ranks(2, [&](dist::ProcessGroup& pg) {
    FineTuneOptions options;
    options.checkpoint_path = source;
    torch::manual_seed(3);
    TrainingSession session(config_, true, pg.shared_from_this());
    const FineTuneResult result = fine_tune_restore(session, options);
    EXPECT_TRUE(result.model.missing.empty());
    EXPECT_TRUE(result.optimizer_restored);
    TrainingSession single(config_, false);
    fine_tune_restore(single, options);
    for (int b = 0; b < 4; ++b) {
      EXPECT_TRUE(torch::allclose(predict_eval(session, data[b]), predict_eval(single, data[b]), 1e-6, 1e-6))
          << "batch " << b << ", rank " << pg.rank();
    }
    save_distributed(session, tuned, 3, pg);
  }, options("finetune")));
  if (dt::is_rank_worker()) return;
  for (const char* table : {"cat_0_emb", "cat_1_emb", "cat_2_emb"}) {
    const auto before = rows_by_id(checkpointing::checkpoint_dir(source, 3), table);
    const auto after = rows_by_id(checkpointing::checkpoint_dir(tuned, 3), table);
    EXPECT_GT(before.size(), 50u) << table;
    ASSERT_EQ(before.size(), after.size()) << table;
    for (const auto& [id, rows] : before) {
      ASSERT_EQ(after.count(id), 1u) << table << " id " << id;
      EXPECT_TRUE(torch::equal(rows.weight, after.at(id).weight)) << table << " weight of id " << id;
      EXPECT_TRUE(torch::equal(rows.momentum, after.at(id).momentum)) << table << " accumulator of id " << id;
    }
  }
}

}  // namespace dynamic_distributed_session_test
}  // namespace tzrec::train
