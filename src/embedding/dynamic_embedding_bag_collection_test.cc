// DynamicEmbeddingBagCollection (docs/tzrec-compatibility.md §5.13): raw ids → rows of a
// DynamicTable before the lookup. Expected values are worked out by hand from the rules in
// dynamic_embedding_bag_collection.h and dynamic_table.h (rows handed out lowest first, the
// reserved rows R and R + 1 for ids without a row in training and in evaluation).
#include "embedding/dynamic_embedding_bag_collection.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "embedding/fused_embedding_bags.h"
#include "embedding/fused_row_optimizer.h"
#include "sparse/jagged_tensor.h"
#include "embedding/testing_memory.h"
#include "embedding/testing_tensors.h"

namespace tzrec::embedding {
namespace dynamic_embedding_bag_collection_test {

using testing::i64;
using testing::resident_mib;
using testing::vec;

using sparse::JaggedTensor;
using sparse::KeyedJaggedTensor;

// One feature "a" on table "t" of dim 2: max_capacity 16 in one bucket of 16 (R = 16), new rows
// CONSTANT 0.5, evaluation CONSTANT -1, admission (threshold) with CONSTANT 0.25.
DynamicEmbeddingBagCollection make(int64_t threshold = 0, DynamicScoreStrategy strategy = DynamicScoreStrategy::kStep) {
  DynamicEmbTableConfig t;
  t.table.name = "t";
  t.table.num_embeddings = 16;
  t.table.embedding_dim = 2;
  t.dynamic.table.max_capacity = 16;
  t.dynamic.table.bucket_capacity = 16;
  t.dynamic.table.score_strategy = strategy;
  t.dynamic.table.field_path = "feature_configs[0].id_feature.dynamicemb";
  t.dynamic.init.mode = DynamicEmbInitializer::Mode::kConstant;
  t.dynamic.init.value = 0.5;
  t.dynamic.eval_init.value = -1.0;
  if (threshold > 0) {
    DynamicAdmissionOptions a;
    a.threshold = threshold;
    t.dynamic.table.admission = a;
    t.dynamic.admission_init.value = 0.25;
  }
  BagConfig bag;
  bag.feature_name = "a";
  bag.table_name = "t";
  return DynamicEmbeddingBagCollection(std::vector<DynamicEmbTableConfig>{t}, std::vector<BagConfig>{bag});
}

KeyedJaggedTensor batch(const std::vector<int64_t>& values, const std::vector<int64_t>& lengths) {
  return KeyedJaggedTensor::from_jagged({"a"}, {JaggedTensor{i64(values), i64(lengths), {}}});
}

torch::Tensor weight(DynamicEmbeddingBagCollection& m) { return m->embedding_module()->tables().at(0).weight; }

TEST(DynamicEmbeddingBagCollection, NewIdsGetFreshRowsUnknownIdsTheEvalValue) {
  auto m = make();
  EXPECT_EQ(weight(m).size(0), 16 + 2);
  {
    torch::NoGradGuard no_grad;
    weight(m).fill_(9.0f);
  }
  m->train();
  // Rows 0, 1 to 10 and 20 (first occurrence order), reset to 0.5; bag 0 = 10 + 20, bag 1 = 10.
  KeyedJaggedTensor remapped = m->remap(batch({10, 20, 10}, {2, 1}), /*training=*/true);
  EXPECT_EQ(vec(remapped.values()), (std::vector<int64_t>{0, 1, 0}));
  sparse::KeyedTensor out = m->forward(batch({10, -3}, {1, 1}));  // -3 takes row 2
  EXPECT_TRUE(torch::equal(out.values(), torch::tensor({{0.5f, 0.5f}, {0.5f, 0.5f}})));
  EXPECT_EQ(m->step(), 2);
  EXPECT_EQ(m->dynamic_table("t").size(), 3);
  // Untouched rows keep their values; reserved rows hold the constants.
  torch::Tensor w = weight(m).detach();
  EXPECT_TRUE(torch::equal(w[3], torch::tensor({9.0f, 9.0f})));
  EXPECT_TRUE(torch::equal(w[16], torch::tensor({0.0f, 0.0f})));   // admission value (none configured: 0)
  EXPECT_TRUE(torch::equal(w[17], torch::tensor({-1.0f, -1.0f})));  // eval value

  // Evaluation finds only: 99 is unknown (row R + 1, the eval value), nothing is inserted.
  m->eval();
  EXPECT_EQ(vec(m->remap(batch({20, 99}, {1, 1}), false).values()), (std::vector<int64_t>{1, 17}));
  out = m->forward(batch({20, 99}, {2, 0}));
  EXPECT_TRUE(torch::equal(out.values(), torch::tensor({{-0.5f, -0.5f}, {0.0f, 0.0f}})));
  EXPECT_EQ(m->dynamic_table("t").size(), 3);
  EXPECT_EQ(m->step(), 2);
}

// Frequency admission with threshold 2: an id seen once reads the admission value (row R) and
// gets no row; on its second appearance it is admitted and gets a fresh row.
TEST(DynamicEmbeddingBagCollection, AdmissionThresholdAndReservedRowsSurviveUpdates) {
  auto m = make(/*threshold=*/2);
  FusedOptimizerOptions opt;
  opt.kind = FusedOptimizerKind::kSgd;
  opt.lr = 1.0;
  m->embedding_module()->enable_fused_optimizer(opt);
  m->train();
  sparse::KeyedTensor out = m->forward(batch({7}, {1}));
  EXPECT_TRUE(torch::equal(out.values().detach(), torch::tensor({{0.25f, 0.25f}})));
  EXPECT_EQ(m->dynamic_table("t").size(), 0);
  out.values().sum().backward();  // SGD moves row R by -1
  EXPECT_TRUE(torch::equal(weight(m).detach()[16], torch::tensor({-0.75f, -0.75f})));
  // The next training forward puts row R back before reading it; 7 is admitted now.
  out = m->forward(batch({8, 7}, {1, 1}));
  EXPECT_TRUE(torch::equal(out.values().detach(), torch::tensor({{0.25f, 0.25f}, {0.5f, 0.5f}})));
  EXPECT_EQ(m->dynamic_table("t").size(), 1);
}

// sync_state → buffers → a fresh collection's reload_state: the same rows for every id, and
// training continues identically (new ids get the same rows).
TEST(DynamicEmbeddingBagCollection, BuffersRoundTripTheTable) {
  auto a = make(/*threshold=*/2, DynamicScoreStrategy::kLfu);
  a->train();
  a->forward(batch({1, 2, 1, 3, 3, 3}, {3, 3}));  // 1 and 3 admitted (2 and 3 times), 2 counted once
  a->forward(batch({4, 4, 1}, {2, 1}));
  a->sync_state();
  std::vector<std::string> buffers;
  for (const auto& b : a->named_buffers()) buffers.push_back(b.key());
  const std::string p = "dynamic_tables.t.";
  EXPECT_EQ(buffers, (std::vector<std::string>{p + "step", p + "row_keys", p + "row_scores", p + "row_live",
                                               p + "admission_keys", p + "admission_counts"}));
  auto b = make(2, DynamicScoreStrategy::kLfu);
  {
    torch::NoGradGuard no_grad;
    auto from = a->named_buffers();
    for (auto& item : b->named_buffers()) item.value().copy_(from[item.key()]);
    auto wa = a->named_parameters();
    for (auto& item : b->named_parameters()) item.value().copy_(wa[item.key()]);
  }
  b->reload_state();
  EXPECT_EQ(b->step(), 2);
  EXPECT_EQ(vec(b->remap(batch({1, 2, 3, 4}, {4}), false).values()), vec(a->remap(batch({1, 2, 3, 4}, {4}), false).values()));
  // 2 was counted once before: its second appearance admits it in both.
  EXPECT_EQ(vec(b->remap(batch({2, 5}, {2}), true).values()), vec(a->remap(batch({2, 5}, {2}), true).values()));
}


// The weight, the Adagrad state and the state buffers are sized for max_capacity (4M rows: 256 +
// 16 + 68 MiB) but take memory only for the rows in use (demand_paged_tensor.h): rows are drawn
// when handed out, never before, so the unused rows read zeros. The sync of a table that now holds
// fewer rows clears the rows it held before. Expected values: zeros by construction, memory
// from VmRSS with slack for huge pages.
TEST(DynamicEmbeddingBagCollection, UnusedRowsTakeNoMemory) {
  const double before = resident_mib();
  DynamicEmbTableConfig t;
  t.table.name = "t";
  t.table.embedding_dim = 16;
  t.dynamic.table.max_capacity = 4 << 20;
  t.dynamic.table.init_capacity = 1024;
  t.dynamic.table.field_path = "feature_configs[0].id_feature.dynamicemb";
  t.dynamic.init.mode = DynamicEmbInitializer::Mode::kUniform;
  t.dynamic.init.lower = 0.5;
  t.dynamic.init.upper = 1.0;
  BagConfig bag;
  bag.feature_name = "a";
  bag.table_name = "t";
  DynamicEmbeddingBagCollection m(std::vector<DynamicEmbTableConfig>{t}, std::vector<BagConfig>{bag});
  FusedOptimizerOptions opt;
  opt.kind = FusedOptimizerKind::kRowwiseAdagrad;
  m->embedding_module()->enable_fused_optimizer(opt);
  m->train();
  std::vector<int64_t> ids(1000);
  for (int64_t i = 0; i < 1000; ++i) ids[i] = i * 7919 + 3;
  m->forward(batch(ids, std::vector<int64_t>(1000, 1))).values().sum().backward();
  m->sync_state();
  EXPECT_LT(resident_mib() - before, 48.0);
  const torch::Tensor w = weight(m).detach();
  const int64_t rows = m->dynamic_table("t").num_rows();
  ASSERT_EQ(rows, 1000);
  EXPECT_GT(w.slice(0, 0, rows).abs().min().item<float>(), 0.0f);  // drawn from [0.5, 1], one SGD step
  EXPECT_EQ(w.slice(0, rows, w.size(0) - 2).count_nonzero().item<int64_t>(), 0);
  EXPECT_LT(resident_mib() - before, 48.0);  // reading the unused rows backs nothing

  // Keep the first 10 entries only, renumbered (kCompact): the next sync leaves rows 10.. clear.
  DynamicTableState state = m->dynamic_table("t").export_state();
  state.keys.resize(10);
  state.rows.resize(10);
  state.scores.resize(10);
  m->dynamic_table("t").load(state, DynamicRowMode::kCompact);
  m->sync_state();
  torch::Tensor live;
  for (const auto& b : m->named_buffers()) {
    if (b.key() == "dynamic_tables.t.row_live") live = b.value();
  }
  ASSERT_TRUE(live.defined());
  EXPECT_EQ(live.sum().item<int64_t>(), 10);
  EXPECT_EQ(live.slice(0, 0, 10).sum().item<int64_t>(), 10);

  // Released after a checkpoint read them: zeros until the next sync writes them again.
  m->release_state_buffers();
  EXPECT_EQ(live.sum().item<int64_t>(), 0);
  m->sync_state();
  EXPECT_EQ(live.slice(0, 0, 10).sum().item<int64_t>(), 10);

  // Buffers filled by a restore, with a stale key in a row no id holds (row 500): reloaded, then
  // synced — the stale key is cleared, and the rows past it are not written (no memory).
  torch::Tensor keys;
  for (const auto& b : m->named_buffers()) {
    if (b.key() == "dynamic_tables.t.row_keys") keys = b.value();
  }
  ASSERT_TRUE(keys.defined());
  keys[500] = 12345;
  m->reload_state();
  EXPECT_EQ(m->dynamic_table("t").size(), 10);
  m->sync_state();
  EXPECT_EQ(keys[500].item<int64_t>(), 0);
  EXPECT_LT(resident_mib() - before, 48.0);
}

TEST(DynamicEmbeddingBagCollection, RefusesRandomInitializersForIdsWithoutRows) {
  DynamicEmbTableConfig t;
  t.table.name = "t";
  t.table.num_embeddings = 16;
  t.table.embedding_dim = 2;
  t.dynamic.table.max_capacity = 16;
  t.dynamic.table.field_path = "feature_configs[0].id_feature.dynamicemb";
  t.dynamic.eval_init.mode = DynamicEmbInitializer::Mode::kNormal;
  try {
    DynamicEmbeddingBagCollection(std::vector<DynamicEmbTableConfig>{t}, std::vector<BagConfig>{});
    ADD_FAILURE() << "no error";
  } catch (const NotSupportedError& e) {
    EXPECT_EQ(std::string(e.what()),
              "not supported yet: feature_configs[0].id_feature.dynamicemb.eval_initializer_args.mode other than "
              "CONSTANT");
  }
}

}  // namespace dynamic_embedding_bag_collection_test
}  // namespace tzrec::embedding
