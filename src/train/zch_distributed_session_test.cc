// Zero-collision hashed tables sharded row-wise across ranks (embedding/zch_sharding.h,
// docs/tzrec-compatibility.md §5.12), TrainingSession end to end with ranks as processes:
//   - two ranks train on their own batches (ids routed to the rank owning them, rows reset where
//     evictions free them) and checkpoint; the checkpoint restored on three ranks and on one
//     process predicts exactly what it predicted on two (every id of the batch is held, so every
//     lookup reads the weights the id had);
//   - saved again from three ranks, every id keeps its weight row and its sparse optimizer state
//     (rows of ids that changed blocks moved with them), compared id by id with the two-rank
//     checkpoint read independently from the files.
//   - fine_tune_checkpoint on two ranks from a one-process checkpoint loads every id's weights and
//     optimizer state into the rank owning it, and predicts what one process fine-tuned from it does.
#include <limits>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "checkpoint/sharded_checkpoint.h"
#include "embedding/id_owner.h"
#include "train/distributed_session_testing.h"
#include "train/fine_tune.h"

namespace tzrec::train {
namespace zch_distributed_session_test {

namespace dt = dist::testing;

class ZchDistributedSessionTest : public DistributedSessionTest {
 protected:
  void SetUp() override {
    DistributedSessionTest::SetUp();
    // Three categorical features get zch tables large enough that no id of the 512 rows is ever
    // evicted or dropped on 1, 2 or 3 ranks; one per eviction policy.
    for (auto& fc : *config_.mutable_feature_configs()) {
      if (!fc.has_id_feature()) continue;
      auto* f = fc.mutable_id_feature();
      auto* zch = f->mutable_zch();
      zch->set_zch_size(2048);
      zch->set_eviction_interval(1);
      if (f->feature_name() == "cat_0") {
        zch->mutable_lfu();
      } else if (f->feature_name() == "cat_1") {
        zch->mutable_lru()->set_decay_exponent(1.0);
      } else if (f->feature_name() == "cat_2") {
        zch->mutable_distance_lfu()->set_decay_exponent(0.5);
      } else {
        f->clear_zch();
      }
    }
  }
};

constexpr const char* kPrefix = "embedding_group.emb_impls.__BASE__.mc_ebc.";

// id → (weight row, adagrad accumulator row) of table `table` in checkpoint `dir`, read from its
// files (whatever world size wrote them).
struct IdRows {
  int64_t slot;
  torch::Tensor weight;
  torch::Tensor momentum;
};

std::map<int64_t, IdRows> rows_by_id(const std::string& dir, const std::string& table) {
  const checkpointing::CheckpointTensorIndex index(dir);
  const std::string modules = std::string(kPrefix) + "_managed_collision_collection._managed_collision_modules." + table;
  const torch::Tensor ids = index.read_whole(modules + "._mch_sorted_raw_ids");
  const torch::Tensor slots = index.read_whole(modules + "._mch_remapped_ids_mapping");
  const torch::Tensor weight = index.read_whole(std::string(kPrefix) + "_embedding_module.embedding_bags." + table + ".weight");
  const torch::Tensor momentum = index.read_whole("sparse." + table + ".momentum1");
  std::map<int64_t, IdRows> out;
  for (int64_t i = 0; i < ids.numel(); ++i) {
    const int64_t id = ids[i].item<int64_t>();
    if (id == std::numeric_limits<int64_t>::max()) continue;
    const int64_t slot = slots[i].item<int64_t>();
    out.emplace(id, IdRows{slot, weight[slot].clone(), momentum[slot].clone()});
  }
  return out;
}

TEST_F(ZchDistributedSessionTest, ShardedTablesRestoreOnAnyWorldSizeWithIdenticalLookups) {
  auto data = batches();
  ASSERT_EQ(data.size(), 4u);
  const std::string ckpt2 = shared_dir() + "/w2", ckpt3 = shared_dir() + "/w3";
  if (in_stage("2")) {
    dt::expect_all_succeeded(dt::run_ranks(2, [&](dist::ProcessGroup& pg) {
      torch::manual_seed(1);
      TrainingSession session(config_, /*with_optimizers=*/true, pg.shared_from_this());
      // Rank 0 trains batches 0 and 2, rank 1 batches 1 and 3: every id is seen by some rank.
      for (int step = 0; step < 2; ++step) train_on(session, data[2 * step + pg.rank()], step);
      const auto& plan = session.sharded_embeddings()->plan();
      EXPECT_EQ(plan.table("cat_0_emb").type, dist::ShardingType::kRowWise);
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
  for (const char* table : {"cat_0_emb", "cat_1_emb", "cat_2_emb", "cat_0_emb_wide"}) {
    const auto two = rows_by_id(checkpointing::checkpoint_dir(ckpt2, 2), table);
    const auto three = rows_by_id(checkpointing::checkpoint_dir(ckpt3, 2), table);
    EXPECT_GT(two.size(), 50u) << table;
    ASSERT_EQ(two.size(), three.size()) << table;
    for (const auto& [id, rows] : two) {
      // Each id lives in the row block of the rank that owns it (blocks of 1024 rows on 2 ranks).
      EXPECT_EQ(rows.slot / 1024, embedding::id_owner_rank(id, 2)) << table << " id " << id;
      ASSERT_EQ(three.count(id), 1u) << table << " id " << id;
      EXPECT_TRUE(torch::equal(rows.weight, three.at(id).weight)) << table << " weight of id " << id;
      EXPECT_TRUE(torch::equal(rows.momentum, three.at(id).momentum)) << table << " accumulator of id " << id;
    }
  }
  // Every id the two ranks trained on is held (the tables never fill).
  const auto held = rows_by_id(checkpointing::checkpoint_dir(ckpt2, 2), "cat_0_emb");
  for (const sparse::Batch& batch : data) {
    const torch::Tensor ids = batch.sparse_features["cat_0"].values;
    for (int64_t i = 0; i < ids.numel(); ++i) EXPECT_EQ(held.count(ids[i].item<int64_t>()), 1u);
  }
  // On one process, the two- and three-rank checkpoints predict alike.
  TrainingSession from_two(config_, false), from_three(config_, false);
  from_two.restore(checkpointing::load_checkpoint(checkpointing::checkpoint_dir(ckpt2, 2)), false);
  from_three.restore(checkpointing::load_checkpoint(checkpointing::checkpoint_dir(ckpt3, 2)), false);
  EXPECT_TRUE(torch::allclose(predict_eval(from_two, data[3]), predict_eval(from_three, data[3]), 1e-6, 1e-6));
}

// fine_tune_checkpoint on two ranks from a one-process checkpoint: each rank takes the ids it owns
// with their weights and optimizer state, and predicts what one process fine-tuned from it does.
TEST_F(ZchDistributedSessionTest, FineTuneOnTwoRanksFromOneProcess) {
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

}  // namespace zch_distributed_session_test
}  // namespace tzrec::train
