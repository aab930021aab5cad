// Sharded == unsharded: every sharding type at world sizes 2 and 4 (ranks as processes, Gloo on
// 127.0.0.1) against the single-process FusedEmbeddingBags on the concatenated batch of all ranks:
// pooled outputs each step, then weights and optimizer state after several steps, to 1e-5.
#include "dist/sharded_embedding_bags.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "dist/testing_multiprocess.h"

namespace tzrec::dist {
namespace sharded_embedding_bags_test {

using embedding::FusedEmbeddingBags;
using embedding::FusedFeatureInput;
using embedding::FusedFeatureSpec;
using embedding::FusedOptimizerKind;
using embedding::FusedOptimizerOptions;
using embedding::FusedTableSpec;

const std::vector<ShardedTableSpec> kTables = {
    {"t0", 50, 8, true, torch::kFloat32},
    {"t1", 37, 8, true, torch::kFloat32},
    {"t2", 23, 12, true, torch::kFloat32},
};
// f0 and f1 share t0; f2 is weighted; f1 and f3 use mean pooling.
const std::vector<FusedFeatureSpec> kFeatures = {
    {"f0", "t0", "sum"}, {"f1", "t0", "mean"}, {"f2", "t1", "sum"}, {"f3", "t2", "mean"}};
const std::vector<bool> kWeighted = {false, false, true, true};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A hand-built plan: every table with `type` (table i placed from rank i on).
ShardingPlan make_plan(ShardingType type, int world, int local_world) {
  ShardingPlan plan;
  plan.world_size = world;
  for (size_t i = 0; i < kTables.size(); ++i) {
    const ShardedTableSpec& t = kTables[i];
    TableSharding ts;
    ts.table = t.name;
    ts.num_embeddings = t.num_embeddings;
    ts.embedding_dim = t.embedding_dim;
    ts.type = type;
    const int first = static_cast<int>(i) % world;
    switch (type) {
      case ShardingType::kTableWise:
        ts.shards.push_back({first, 0, t.num_embeddings, 0, t.embedding_dim});
        break;
      case ShardingType::kDataParallel:
        for (int r = 0; r < world; ++r) ts.shards.push_back({r, 0, t.num_embeddings, 0, t.embedding_dim});
        break;
      case ShardingType::kRowWise:
      case ShardingType::kTableRowWise: {
        const int n = type == ShardingType::kRowWise ? world : local_world;
        const int base = type == ShardingType::kRowWise ? 0 : (static_cast<int>(i) % (world / local_world)) * local_world;
        const int64_t block = ceil_div(t.num_embeddings, n);
        for (int k = 0; k < n; ++k) {
          const int64_t off = std::min<int64_t>(k * block, t.num_embeddings);
          ts.shards.push_back({base + k, off, std::min(block, t.num_embeddings - off), 0, t.embedding_dim});
        }
        break;
      }
      case ShardingType::kColumnWise: {
        // Two column blocks (multiples of 4) on consecutive ranks.
        const int64_t c0 = (t.embedding_dim / 8) * 4;
        ts.shards.push_back({first, 0, t.num_embeddings, 0, c0});
        ts.shards.push_back({(first + 1) % world, 0, t.num_embeddings, c0, t.embedding_dim - c0});
        break;
      }
    }
    plan.tables.push_back(ts);
  }
  return plan;
}

// The global batch of one step: features for sum(B_r) rows, rank r owning rows
// [offset_r, offset_r + B_r) with B_r = 3 + r (empty bags included).
struct GlobalBatch {
  std::vector<FusedFeatureInput> all;
  std::vector<int64_t> offsets;  // per rank, + total
};

GlobalBatch make_batch(int world, int step) {
  torch::manual_seed(1000 + step);
  GlobalBatch g;
  int64_t total = 0;
  for (int r = 0; r < world; ++r) {
    g.offsets.push_back(total);
    total += 3 + r;
  }
  g.offsets.push_back(total);
  for (size_t f = 0; f < kFeatures.size(); ++f) {
    const int64_t rows = kTables[f < 2 ? 0 : f - 1].num_embeddings;
    FusedFeatureInput in;
    in.lengths = torch::randint(0, 5, {total}, torch::kInt64);
    const int64_t n = in.lengths.sum().item<int64_t>();
    in.ids = torch::randint(0, rows, {n}, torch::kInt64);
    if (kWeighted[f]) in.weights = torch::rand({n}) + 0.5;
    g.all.push_back(in);
  }
  return g;
}

// Rows [b, e) of a feature batch.
FusedFeatureInput slice_rows(const FusedFeatureInput& in, int64_t b, int64_t e) {
  torch::Tensor offsets = torch::cat({torch::zeros({1}, torch::kInt64), torch::cumsum(in.lengths, 0)});
  const int64_t s = offsets[b].item<int64_t>(), t = offsets[e].item<int64_t>();
  FusedFeatureInput out;
  out.lengths = in.lengths.slice(0, b, e).clone();
  out.ids = in.ids.slice(0, s, t).clone();
  if (in.weights.defined()) out.weights = in.weights.slice(0, s, t).clone();
  return out;
}

std::vector<torch::Tensor> initial_weights() {
  torch::manual_seed(7);
  std::vector<torch::Tensor> w;
  for (const ShardedTableSpec& t : kTables) w.push_back(torch::rand({t.num_embeddings, t.embedding_dim}) - 0.5);
  return w;
}

struct Case {
  const char* name;
  FusedOptimizerOptions options;
  bool freeze_t1 = false;
};

std::vector<Case> cases(ShardingType type) {
  std::vector<Case> out;
  FusedOptimizerOptions adagrad;
  adagrad.kind = FusedOptimizerKind::kAdagrad;
  adagrad.lr = 0.05;
  adagrad.initial_accumulator_value = 0.1;
  out.push_back({"adagrad", adagrad});
  FusedOptimizerOptions adam;
  adam.kind = FusedOptimizerKind::kAdam;
  adam.lr = 0.01;
  adam.weight_decay = 0.01;
  adam.gradient_clipping = true;
  adam.max_gradient = 0.5;
  out.push_back({"adam, clipping, frozen t1", adam, true});
  if (type != ShardingType::kColumnWise) {  // row-wise state is per column block there (TorchRec too)
    FusedOptimizerOptions rowwise;
    rowwise.kind = FusedOptimizerKind::kRowwiseAdagrad;
    rowwise.lr = 0.05;
    rowwise.weight_decay = 0.01;
    rowwise.weight_decay_mode = embedding::WeightDecayMode::kL2;
    out.push_back({"rowwise_adagrad L2", rowwise});
    FusedOptimizerOptions lamb;
    lamb.kind = FusedOptimizerKind::kPartialRowwiseLamb;
    lamb.lr = 0.01;
    out.push_back({"partial_rowwise_lamb", lamb});
  }
  return out;
}

void expect_close(const torch::Tensor& a, const torch::Tensor& b, const std::string& what, double tol = 1e-5) {
  ASSERT_EQ(a.sizes(), b.sizes()) << what;
  const double diff = a.numel() == 0 ? 0.0 : (a.to(torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>();
  EXPECT_LE(diff, tol) << what;
}

// dtype: the tables' storage (float16: data_type FP16), in the reference and the shards alike;
// tol: float32 sums in another order may round a float16 weight to the neighbouring value.
void check_sharded_equals_unsharded(ProcessGroup& pg, ShardingType type, int local_world,
                                    torch::ScalarType dtype = torch::kFloat32, double tol = 1e-5) {
  const int world = pg.world_size();
  const int rank = pg.rank();
  for (const Case& c : cases(type)) {
    SCOPED_TRACE(std::string(c.name) + ", " + sharding_type_name(type));
    std::vector<ShardedTableSpec> tables = kTables;
    if (c.freeze_t1) tables[1].trainable = false;
    for (auto& t : tables) t.dtype = dtype;
    std::vector<torch::Tensor> init = initial_weights();
    for (auto& w : init) w = w.to(dtype);

    // Reference: one process, full tables, the batches of all ranks.
    std::vector<FusedTableSpec> ref_tables;
    for (size_t t = 0; t < tables.size(); ++t) ref_tables.push_back({tables[t].name, init[t].clone(), tables[t].trainable});
    FusedEmbeddingBags ref(ref_tables, kFeatures, c.options);

    ShardedEmbeddingBags sharded(tables, kFeatures, c.options, make_plan(type, world, local_world),
                                 pg.shared_from_this());
    for (const auto& ls : sharded.local_shards()) {
      const size_t t = ls.table == "t0" ? 0 : ls.table == "t1" ? 1 : 2;
      torch::NoGradGuard no_grad;
      ls.weight.copy_(init[t].narrow(0, ls.shard.row_offset, ls.shard.rows).narrow(1, ls.shard.col_offset, ls.shard.cols));
    }
    for (int step = 0; step < 3; ++step) {
      GlobalBatch g = make_batch(world, step);
      torch::Tensor ref_out = ref.forward(g.all);
      torch::manual_seed(99 + step);
      torch::Tensor grad = torch::randn(ref_out.sizes());
      ref_out.backward(grad);

      std::vector<FusedFeatureInput> mine;
      for (const auto& in : g.all) mine.push_back(slice_rows(in, g.offsets[rank], g.offsets[rank + 1]));
      torch::Tensor out = sharded.forward(mine);
      const int64_t b = g.offsets[rank + 1] - g.offsets[rank];
      expect_close(out, ref_out.detach().narrow(0, g.offsets[rank], b), "pooled output, step " + std::to_string(step),
                   tol);
      out.backward(grad.narrow(0, g.offsets[rank], b));
    }
    // Weights and optimizer state of every local shard = the same block of the reference.
    const auto ref_state = ref.state_dict();
    const auto local_state = sharded.local_shards().empty() ? std::map<std::string, torch::Tensor>()
                                                            : sharded.local().state_dict();
    for (const auto& ls : sharded.local_shards()) {
      const size_t t = ls.table == "t0" ? 0 : ls.table == "t1" ? 1 : 2;
      const Shard& s = ls.shard;
      expect_close(ls.weight, ref_tables[t].weight.narrow(0, s.row_offset, s.rows).narrow(1, s.col_offset, s.cols),
                   "weights of " + ls.local_name, tol);
      for (const auto& [key, value] : ref_state) {
        const std::string prefix = ls.table + ".";
        if (key.rfind(prefix, 0) != 0) continue;
        const std::string slot = key.substr(prefix.size());
        auto it = local_state.find(ls.local_name + "." + slot);
        ASSERT_NE(it, local_state.end()) << "no state " << slot << " for " << ls.local_name;
        torch::Tensor expected = value;
        if (value.dim() >= 1) expected = expected.narrow(0, s.row_offset, s.rows);
        if (value.dim() == 2) expected = expected.narrow(1, s.col_offset, s.cols);
        expect_close(it->second, expected, "state " + slot + " of " + ls.local_name, tol);
      }
    }
  }
}

struct ShardingCase {
  ShardingType type;
  int world;
  int local_world;
};

class ShardedEqualsUnsharded : public ::testing::TestWithParam<ShardingCase> {};

TEST_P(ShardedEqualsUnsharded, OutputsWeightsAndOptimizerState) {
  const ShardingCase c = GetParam();
  auto statuses = testing::run_ranks(c.world, [&](ProcessGroup& pg) {
    check_sharded_equals_unsharded(pg, c.type, c.local_world);
  });
  testing::expect_all_succeeded(statuses);
}

std::string case_name(const ::testing::TestParamInfo<ShardingCase>& info) {
  return sharding_type_name(info.param.type) + "_world" + std::to_string(info.param.world);
}

INSTANTIATE_TEST_SUITE_P(
    AllTypes, ShardedEqualsUnsharded,
    ::testing::Values(ShardingCase{ShardingType::kTableWise, 2, 2}, ShardingCase{ShardingType::kTableWise, 4, 4},
                      ShardingCase{ShardingType::kRowWise, 2, 2}, ShardingCase{ShardingType::kRowWise, 4, 4},
                      ShardingCase{ShardingType::kColumnWise, 2, 2}, ShardingCase{ShardingType::kColumnWise, 4, 4},
                      ShardingCase{ShardingType::kDataParallel, 2, 2},
                      ShardingCase{ShardingType::kDataParallel, 4, 4},
                      ShardingCase{ShardingType::kTableRowWise, 4, 2}),
    case_name);

// data_type FP16 tables sharded row-wise and table-wise on 2 ranks: the shards hold float16 and
// train as the unsharded float16 tables do.
TEST(ShardedEmbeddingBags, Fp16TablesEqualUnsharded) {
  auto statuses = testing::run_ranks(2, [](ProcessGroup& pg) {
    for (ShardingType type : {ShardingType::kRowWise, ShardingType::kTableWise}) {
      check_sharded_equals_unsharded(pg, type, 2, torch::kFloat16, 2e-3);
    }
  });
  testing::expect_all_succeeded(statuses);
}

// Ids outside a table are refused on the rank that has them, naming feature and table.
TEST(ShardedEmbeddingBags, BadIdIsADataError) {
  if (testing::is_rank_worker()) return;
  auto pg = ProcessGroup::create(DistEnv{});
  ShardedEmbeddingBags bags(kTables, kFeatures, FusedOptimizerOptions{}, make_plan(ShardingType::kTableWise, 1, 1), pg);
  GlobalBatch g = make_batch(1, 0);
  g.all[2].ids[0] = 37;
  try {
    bags.forward(g.all);
    ADD_FAILURE() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("feature 'f2': id 37 is outside embedding table 't1'"), std::string::npos)
        << e.what();
  }
}

TEST(ShardedEmbeddingBags, PlanMustMatchTheTables) {
  if (testing::is_rank_worker()) return;
  auto pg = ProcessGroup::create(DistEnv{});
  ShardingPlan plan = make_plan(ShardingType::kTableWise, 1, 1);
  plan.tables[1].num_embeddings = 36;
  plan.tables[1].shards[0].rows = 36;
  EXPECT_THROW(ShardedEmbeddingBags(kTables, kFeatures, FusedOptimizerOptions{}, plan, pg), ConfigError);
  ShardingPlan two = make_plan(ShardingType::kTableWise, 2, 2);
  EXPECT_THROW(ShardedEmbeddingBags(kTables, kFeatures, FusedOptimizerOptions{}, two, pg), ConfigError);
}

}  // namespace sharded_embedding_bags_test
}  // namespace tzrec::dist
