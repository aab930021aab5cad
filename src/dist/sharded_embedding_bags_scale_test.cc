// Loss scaling in the sharded backward (2 ranks as processes, Gloo on 127.0.0.1): scaled
// gradients update the shards like unscaled ones on one process, and a non-finite gradient on
// one rank skips the update of every shard on every rank.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "dist/sharded_embedding_bags.h"
#include "dist/testing_multiprocess.h"

namespace tzrec::dist {
namespace sharded_embedding_bags_scale_test {

using embedding::FusedEmbeddingBags;
using embedding::FusedFeatureInput;
using embedding::FusedOptimizerKind;
using embedding::FusedOptimizerOptions;

// "rw" [20, 4] row-wise over both ranks, "dp" [6, 4] data-parallel; features a (rw, sum),
// b (dp, mean).
const std::vector<ShardedTableSpec> kTables = {{"rw", 20, 4, true, torch::kFloat32},
                                               {"dp", 6, 4, true, torch::kFloat32}};
const std::vector<embedding::FusedFeatureSpec> kFeatures = {{"a", "rw", "sum"}, {"b", "dp", "mean"}};
constexpr int64_t kRowsPerRank = 3;

ShardingPlan plan() {
  ShardingPlan p;
  p.world_size = 2;
  TableSharding rw{"rw", 20, 4, ShardingType::kRowWise, {{0, 0, 10, 0, 4}, {1, 10, 10, 0, 4}}};
  TableSharding dp{"dp", 6, 4, ShardingType::kDataParallel, {{0, 0, 6, 0, 4}, {1, 0, 6, 0, 4}}};
  p.tables = {rw, dp};
  return p;
}

std::vector<torch::Tensor> initial() {
  torch::manual_seed(21);
  return {torch::randn({20, 4}), torch::randn({6, 4})};
}

// The batch of all ranks (2 * kRowsPerRank rows) for `step`; rank r owns rows [3r, 3r + 3).
std::vector<FusedFeatureInput> global_batch(int step) {
  torch::manual_seed(300 + step);
  std::vector<FusedFeatureInput> in(2);
  in[0].lengths = torch::randint(1, 4, {2 * kRowsPerRank}, torch::kInt64);
  in[0].ids = torch::randint(0, 20, {in[0].lengths.sum().item<int64_t>()}, torch::kInt64);
  in[1].lengths = torch::randint(1, 3, {2 * kRowsPerRank}, torch::kInt64);
  in[1].ids = torch::randint(0, 6, {in[1].lengths.sum().item<int64_t>()}, torch::kInt64);
  return in;
}

std::vector<FusedFeatureInput> rank_rows(const std::vector<FusedFeatureInput>& all, int rank) {
  std::vector<FusedFeatureInput> out;
  for (const auto& f : all) {
    torch::Tensor offsets = torch::cat({torch::zeros({1}, torch::kInt64), torch::cumsum(f.lengths, 0)});
    const int64_t b = rank * kRowsPerRank, e = b + kRowsPerRank;
    const int64_t s = offsets[b].item<int64_t>(), t = offsets[e].item<int64_t>();
    FusedFeatureInput r;
    r.lengths = f.lengths.slice(0, b, e).clone();
    r.ids = f.ids.slice(0, s, t).clone();
    out.push_back(r);
  }
  return out;
}

TEST(ShardedEmbeddingBagsScale, ScaledStepsMatchAndOverflowSkipsOnEveryRank) {
  auto statuses = testing::run_ranks(2, [](ProcessGroup& pg) {
    const int rank = pg.rank();
    FusedOptimizerOptions options;
    options.kind = FusedOptimizerKind::kAdagrad;
    options.lr = 0.1;
    const auto init = initial();
    FusedEmbeddingBags ref({{"rw", init[0].clone(), true}, {"dp", init[1].clone(), true}}, kFeatures, options);
    ShardedEmbeddingBags sharded(kTables, kFeatures, options, plan(), pg.shared_from_this());
    for (const auto& ls : sharded.local_shards()) {
      torch::NoGradGuard no_grad;
      ls.weight.copy_(init[ls.table == "rw" ? 0 : 1].narrow(0, ls.shard.row_offset, ls.shard.rows));
    }
    sharded.set_gradient_scale(1024.0);
    auto weights = [&] {
      std::vector<torch::Tensor> w;
      for (const auto& ls : sharded.local_shards()) w.push_back(ls.weight.clone());
      return w;
    };
    auto run = [&](int step, bool poison_rank1) {
      const auto all = global_batch(step);
      torch::manual_seed(400 + step);
      const torch::Tensor grad = torch::randn({2 * kRowsPerRank, 8});
      if (!poison_rank1) ref.forward(all).backward(grad);
      torch::Tensor mine = grad.narrow(0, rank * kRowsPerRank, kRowsPerRank) * 1024;
      if (poison_rank1 && rank == 1) mine[0][1] = std::numeric_limits<float>::infinity();  // an "rw" column
      sharded.forward(rank_rows(all, rank)).backward(mine);
    };
    run(0, false);
    EXPECT_FALSE(sharded.last_backward_found_inf());
    auto before = weights();
    run(1, true);
    EXPECT_TRUE(sharded.last_backward_found_inf()) << "rank " << rank;
    auto after = weights();
    for (size_t i = 0; i < before.size(); ++i) EXPECT_TRUE(torch::equal(before[i], after[i])) << "rank " << rank;
    run(2, false);
    EXPECT_FALSE(sharded.last_backward_found_inf());
    // Two clean scaled steps = the reference's two unscaled steps (the skipped one never happened).
    const auto ref_tables = ref.tables();
    for (const auto& ls : sharded.local_shards()) {
      const torch::Tensor expected = ref_tables[ls.table == "rw" ? 0 : 1].weight.narrow(0, ls.shard.row_offset,
                                                                                         ls.shard.rows);
      EXPECT_LE((ls.weight - expected).abs().max().item<double>(), 1e-6) << ls.local_name << " on rank " << rank;
      EXPECT_FALSE(torch::equal(ls.weight, init[ls.table == "rw" ? 0 : 1].narrow(0, ls.shard.row_offset,
                                                                                ls.shard.rows)));
    }
  });
  testing::expect_all_succeeded(statuses);
}

}  // namespace sharded_embedding_bags_scale_test
}  // namespace tzrec::dist
