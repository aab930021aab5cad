// Remapping tables across ranks — zero-collision hashed tables sharded row-wise
// (embedding/zch_sharding.h, docs/tzrec-compatibility.md §5.12) and dynamic tables spread by id
// (embedding/dynamic_embedding_bag_collection.h, §5.13) — TrainingSession end to end with ranks as
// processes, for each kind:
//   - two ranks train on their own batches (ids routed to the rank owning them, each rank's ids in
//     its own row block) and checkpoint; every id lies in its owner's block. The checkpoint
//     restored on three ranks and on one process predicts exactly what it predicted on two (the
//     tables never fill, so every id keeps its weights; ids below an admission threshold read the
//     evaluation constant everywhere);
//   - saved again from three ranks and from one process (with the optimizer state), every id keeps
//     its weight row and its sparse optimizer state (rows of ids that moved went with them),
//     compared id by id with the two-rank checkpoint read independently from the files;
//   - fine_tune_checkpoint on two ranks from a one-process checkpoint loads every id's weights and
//     optimizer state into the rank owning it, and predicts what one process fine-tuned from it
//     does.
#include <limits>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "checkpoint/sharded_checkpoint.h"
#include "embedding/id_owner.h"
#include "train/distributed_session_testing.h"

namespace tzrec::train {
namespace remapped_distributed_session_test {

namespace dt = dist::testing;

// "zch" or "dynamicemb".
class RemappedDistributedSessionTest : public DistributedSessionTest,
                                       public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    DistributedSessionTest::SetUp();
    // Three categorical features get tables far larger than their ids: one per eviction policy /
    // score strategy; the dynamic cat_2 admits ids seen twice.
    for (auto& fc : *config_.mutable_feature_configs()) {
      if (!fc.has_id_feature()) continue;
      auto* f = fc.mutable_id_feature();
      const std::string& name = f->feature_name();
      if (name != "cat_0" && name != "cat_1" && name != "cat_2") continue;
      if (GetParam() == "zch") {
        auto* zch = f->mutable_zch();
        zch->set_zch_size(2048);
        zch->set_eviction_interval(1);
        if (name == "cat_0") zch->mutable_lfu();
        if (name == "cat_1") zch->mutable_lru()->set_decay_exponent(1.0);
        if (name == "cat_2") zch->mutable_distance_lfu()->set_decay_exponent(0.5);
      } else {
        auto* d = f->mutable_dynamicemb();
        d->set_max_capacity(4096);
        d->set_bucket_capacity(64);
        if (name == "cat_1") d->set_score_strategy("LFU");
        if (name == "cat_2") {
          d->set_score_strategy("NO_EVICTION");
          d->mutable_frequency_admission_strategy()->set_threshold(2);
        }
      }
    }
  }

  std::string collection() const {
    return GetParam() == "zch" ? "embedding_group.emb_impls.__BASE__.mc_ebc."
                               : "embedding_group.emb_impls.__BASE__.dynamicemb_ebc.";
  }

  struct IdRows {
    int64_t block;  // the rank whose row block holds the id
    torch::Tensor weight;
    torch::Tensor momentum;
  };

  // id → its rows of table `table` in checkpoint `dir`, read from the files (any world size).
  // zch: the place buffers give each id's row; the blocks are ceil(S / W) rows, W from the saved
  // output segments. dynamic: the state has W blocks of R rows, the weight W blocks of R + 2.
  std::map<int64_t, IdRows> rows_by_id(const std::string& dir, const std::string& table) const {
    const checkpointing::CheckpointTensorIndex index(dir);
    const torch::Tensor weight = index.read_whole(collection() + "_embedding_module.embedding_bags." + table + ".weight");
    const torch::Tensor momentum = index.read_whole("sparse." + table + ".momentum1");
    std::map<int64_t, IdRows> out;
    if (GetParam() == "zch") {
      const std::string m = collection() + "_managed_collision_collection._managed_collision_modules." + table;
      const torch::Tensor ids = index.read_whole(m + "._mch_sorted_raw_ids");
      const torch::Tensor slots = index.read_whole(m + "._mch_remapped_ids_mapping");
      const int64_t world = index.read_whole(m + "._output_segments_tensor").ge(0).sum().item<int64_t>() - 1;
      const int64_t block = (ids.numel() + world - 1) / world;
      for (int64_t i = 0; i < ids.numel(); ++i) {
        const int64_t id = ids[i].item<int64_t>();
        if (id == std::numeric_limits<int64_t>::max()) continue;
        const int64_t slot = slots[i].item<int64_t>();
        out.emplace(id, IdRows{slot / block, weight[slot].clone(), momentum[slot].clone()});
      }
      return out;
    }
    const std::string state = collection() + "dynamic_tables." + table;
    const torch::Tensor keys = index.read_whole(state + ".row_keys");
    const torch::Tensor live = index.read_whole(state + ".row_live");
    const int64_t world = (weight.size(0) - keys.numel()) / 2;
    const int64_t rows = keys.numel() / world;
    for (int64_t i = 0; i < keys.numel(); ++i) {
      if (live[i].item<int>() == 0) continue;
      const int64_t row = (i / rows) * (rows + 2) + i % rows;
      out.emplace(keys[i].item<int64_t>(), IdRows{i / rows, weight[row].clone(), momentum[row].clone()});
    }
    return out;
  }

  // Every id of `expected` has the same weight and accumulator rows in `other`, and nothing else
  // is there.
  void expect_same_rows(const std::map<int64_t, IdRows>& expected, const std::map<int64_t, IdRows>& other,
                        const std::string& what) const {
    ASSERT_EQ(expected.size(), other.size()) << what;
    for (const auto& [id, rows] : expected) {
      ASSERT_EQ(other.count(id), 1u) << what << ": id " << id;
      EXPECT_TRUE(torch::equal(rows.weight, other.at(id).weight)) << what << ": weight of id " << id;
      EXPECT_TRUE(torch::equal(rows.momentum, other.at(id).momentum)) << what << ": accumulator of id " << id;
    }
  }
};

constexpr const char* kTables[] = {"cat_0_emb", "cat_1_emb", "cat_2_emb", "cat_0_emb_wide", "cat_2_emb_wide"};

TEST_P(RemappedDistributedSessionTest, RestoresOnAnyWorldSizeWithIdenticalLookups) {
  auto data = batches();
  ASSERT_EQ(data.size(), 4u);
  const std::string ckpt2 = shared_dir() + "/w2", ckpt3 = shared_dir() + "/w3", ckpt1 = shared_dir() + "/w1";
  if (in_stage("2")) {
    dt::expect_all_succeeded(dt::run_ranks(2, [&](dist::ProcessGroup& pg) {
      torch::manual_seed(1);
      TrainingSession session(config_, /*with_optimizers=*/true, pg.shared_from_this());
      // Rank 0 trains batches 0 and 2, rank 1 batches 1 and 3: every id is seen by some rank.
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
  for (const char* table : kTables) {
    const auto two = rows_by_id(checkpointing::checkpoint_dir(ckpt2, 2), table);
    EXPECT_GT(two.size(), 50u) << table;
    for (const auto& [id, rows] : two) EXPECT_EQ(rows.block, embedding::id_owner_rank(id, 2)) << table << " id " << id;
    expect_same_rows(two, rows_by_id(checkpointing::checkpoint_dir(ckpt3, 2), table), std::string(table) + " on 3 ranks");
    expect_same_rows(two, rows_by_id(checkpointing::checkpoint_dir(ckpt1, 2), table), std::string(table) + " on 1 process");
  }
  // Every cat_0 id the two ranks trained on is held; the dynamic cat_2 counts ids seen once.
  const auto held = rows_by_id(checkpointing::checkpoint_dir(ckpt2, 2), "cat_0_emb");
  for (const sparse::Batch& batch : data) {
    const torch::Tensor ids = batch.sparse_features["cat_0"].values;
    for (int64_t i = 0; i < ids.numel(); ++i) EXPECT_EQ(held.count(ids[i].item<int64_t>()), 1u);
  }
  if (GetParam() == "dynamicemb") {
    const checkpointing::CheckpointTensorIndex index(checkpointing::checkpoint_dir(ckpt2, 2));
    EXPECT_GT(index.read_whole(collection() + "dynamic_tables.cat_2_emb.admission_counts").gt(0).sum().item<int64_t>(), 0);
  }
  TrainingSession from_three(config_, false);
  from_three.restore(checkpointing::load_checkpoint(checkpointing::checkpoint_dir(ckpt3, 2)), false);
  EXPECT_TRUE(torch::allclose(predict_eval(one, data[3]), predict_eval(from_three, data[3]), 1e-6, 1e-6));
}

TEST_P(RemappedDistributedSessionTest, FineTuneOnTwoRanksFromOneProcess) {
  auto data = batches();
  const std::string source = shared_dir() + "/pretrained", tuned = shared_dir() + "/tuned";
  if (!dt::is_rank_worker()) {
    torch::manual_seed(1);
    TrainingSession trained(config_, true);
    for (int i = 0; i < 4; ++i) train_on(trained, data[i], i);
    checkpointing::save_checkpoint(source, snapshot(trained, 3));
  }
  dt::expect_all_succeeded(dt::run_ranks(2, [&](dist::ProcessGroup& pg) {
    auto [session, single] = fine_tune_on_rank_and_alone(config_, source, pg, /*single_with_optimizers=*/false);
    for (int b = 0; b < 4; ++b) {
      EXPECT_TRUE(torch::allclose(predict_eval(*session, data[b]), predict_eval(*single, data[b]), 1e-6, 1e-6))
          << "batch " << b << ", rank " << pg.rank();
    }
    save_distributed(*session, tuned, 3, pg);
  }, options("finetune")));
  if (dt::is_rank_worker()) return;
  for (const char* table : kTables) {
    const auto before = rows_by_id(checkpointing::checkpoint_dir(source, 3), table);
    EXPECT_GT(before.size(), 50u) << table;
    expect_same_rows(before, rows_by_id(checkpointing::checkpoint_dir(tuned, 3), table), table);
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, RemappedDistributedSessionTest, ::testing::Values("zch", "dynamicemb"));

}  // namespace remapped_distributed_session_test
}  // namespace tzrec::train
