#include "embedding/zch_embedding_bag_collection.h"

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "embedding/embedding_group.h"
#include "embedding/fused_embedding_bags.h"
#include "embedding/fused_row_optimizer.h"
#include "sparse/jagged_tensor.h"
#include "embedding/testing_tensors.h"

namespace tzrec::embedding {
namespace zch_embedding_bag_collection_test {

using testing::i64;
using testing::vec;

using sparse::JaggedTensor;
using sparse::KeyedJaggedTensor;

// One feature "a" on table "t": S rows of dim 2, initializer constant 0.5.
ZchEmbeddingBagCollection make(int64_t zch_size, int64_t interval,
                               const std::string& init_fn = "nn.init.constant_,val=0.5") {
  ZchTableConfig t;
  t.table.name = "t";
  t.table.num_embeddings = zch_size;
  t.table.embedding_dim = 2;
  t.table.init_fn = init_fn;
  t.zch.zch_size = zch_size;
  t.zch.eviction_interval = interval;
  t.zch.eviction = ZchEvictionKind::kLfu;
  BagConfig bag;
  bag.feature_name = "a";
  bag.table_name = "t";
  return ZchEmbeddingBagCollection(std::vector<ZchTableConfig>{t}, std::vector<BagConfig>{bag});
}

KeyedJaggedTensor batch(const std::vector<int64_t>& values, const std::vector<int64_t>& lengths) {
  return KeyedJaggedTensor::from_jagged({"a"}, {JaggedTensor{i64(values), i64(lengths), {}}});
}

// Rows r hold 100 + 2r, 101 + 2r.
void fill_rows(ZchEmbeddingBagCollection& m) {
  torch::NoGradGuard no_grad;
  torch::Tensor w = m->embedding_module()->tables().at(0).weight;
  w.copy_(torch::arange(w.numel(), torch::kFloat32).view_as(w) + 100);
}

// S = 4, eviction every step, LFU. Step 1 sees 10 twice and 20 once: the places sorted by score
// are the sentinel (row 3), 10, 20, then the empty places 0, 1, 2; the top 4 stay, so places 1
// and 2 are evicted and 10 takes row 1, 20 row 2. Those rows are reset to the initializer (0.5)
// before the lookup; rows 0 and 3 keep their values.
TEST(ZchEmbeddingBagCollection, RemapsBeforeLookupAndResetsEvictedRows) {
  auto m = make(4, 1);
  fill_rows(m);
  m->train();
  sparse::KeyedTensor out = m->forward(batch({10, 20, 10}, {2, 1}));
  EXPECT_TRUE(torch::equal(out.values(), torch::tensor({{1.0f, 1.0f}, {0.5f, 0.5f}})));
  EXPECT_EQ(m->zch_module("t").current_iter(), 1);
  torch::Tensor w = m->embedding_module()->tables().at(0).weight.detach();
  EXPECT_TRUE(torch::equal(w, torch::tensor({{100.0f, 101.0f}, {0.5f, 0.5f}, {0.5f, 0.5f}, {106.0f, 107.0f}})));

  // Evaluation remaps only: an unknown id takes the sentinel's row 3, no step is counted.
  m->eval();
  KeyedJaggedTensor remapped = m->remap(batch({10, 99, 20}, {2, 1}), /*training=*/false);
  EXPECT_EQ(vec(remapped.values()), (std::vector<int64_t>{1, 3, 2}));
  out = m->forward(batch({10, 99, 20}, {2, 1}));
  EXPECT_TRUE(torch::equal(out.values(), torch::tensor({{106.5f, 107.5f}, {0.5f, 0.5f}})));
  EXPECT_EQ(m->zch_module("t").current_iter(), 1);
  EXPECT_FALSE(m->zch_module("t").evict().has_value());
}

TEST(ZchEmbeddingBagCollection, FusedModeResetsOptimizerStateOfEvictedRows) {
  auto m = make(4, 1);
  FusedOptimizerOptions opt;
  opt.kind = FusedOptimizerKind::kAdagrad;
  opt.initial_accumulator_value = 0.1;
  FusedEmbeddingBags& fused = m->embedding_module()->enable_fused_optimizer(opt);
  fill_rows(m);
  torch::Tensor m1 = fused.state_dict().at("t.momentum1");
  m1.fill_(5.0f);
  m->train();
  sparse::KeyedTensor out = m->forward(batch({10, 20, 10}, {2, 1}));
  EXPECT_TRUE(torch::equal(out.values().detach(), torch::tensor({{1.0f, 1.0f}, {0.5f, 0.5f}})));
  EXPECT_TRUE(torch::allclose(m1, torch::tensor({{5.0f, 5.0f}, {0.1f, 0.1f}, {0.1f, 0.1f}, {5.0f, 5.0f}})));
  torch::Tensor w = m->embedding_module()->tables().at(0).weight.detach();
  EXPECT_TRUE(torch::equal(w, torch::tensor({{100.0f, 101.0f}, {0.5f, 0.5f}, {0.5f, 0.5f}, {106.0f, 107.0f}})));
}

// Reset rows are drawn from a stream seeded by the table and the step: two collections (two
// processes, e.g. a run and its resumption) draw the same values whatever the default generator's
// state, and the default generator is left as it was.
TEST(ZchEmbeddingBagCollection, ResetDrawsAreReproducibleAndLeaveTheDefaultGeneratorAlone) {
  auto a = make(8, 1, "");
  auto b = make(8, 1, "");
  torch::manual_seed(1);
  a->reset_rows("t", i64({2, 5}));
  const torch::Tensor next_a = torch::rand({4});
  torch::manual_seed(1);
  EXPECT_TRUE(torch::equal(next_a, torch::rand({4})));
  torch::manual_seed(7);
  b->reset_rows("t", i64({2, 5}));
  const torch::Tensor wa = a->embedding_module()->tables().at(0).weight.detach();
  const torch::Tensor wb = b->embedding_module()->tables().at(0).weight.detach();
  EXPECT_TRUE(torch::equal(wa.index_select(0, i64({2, 5})), wb.index_select(0, i64({2, 5}))));
  EXPECT_LE(wa.abs().max().item<float>(), std::sqrt(1.0f / 8));  // TorchRec's default uniform bound
}

TEST(ZchEmbeddingBagCollection, StateDictNamesAreTorchRecs) {
  auto m = make(4, 1);
  std::vector<std::string> params, buffers;
  for (const auto& p : m->named_parameters()) params.push_back(p.key());
  for (const auto& b : m->named_buffers()) buffers.push_back(b.key());
  EXPECT_EQ(params, std::vector<std::string>{"_embedding_module.embedding_bags.t.weight"});
  const std::string prefix = "_managed_collision_collection._managed_collision_modules.t.";
  EXPECT_EQ(buffers, (std::vector<std::string>{prefix + "_output_segments_tensor", prefix + "_current_iter_tensor",
                                               prefix + "_mch_sorted_raw_ids", prefix + "_mch_remapped_ids_mapping",
                                               prefix + "_mch_counts"}));
}

// Training 4 steps (evictions at steps 2 and 4), copying every parameter and buffer into a fresh
// collection (what a checkpoint restore does) and training both on: identical remapping.
TEST(ZchEmbeddingBagCollection, CheckpointRoundTripRemapsIdentically) {
  const std::vector<std::vector<int64_t>> steps = {
      {1, 2, 3, 1}, {4, 1, 5, 2}, {6, 6, 7, 1}, {8, 9, 6, 6}, {2, 3, 10, 10}, {11, 6, 1, 12}};
  auto a = make(5, 2);
  a->train();
  for (size_t s = 0; s < 4; ++s) a->forward(batch(steps[s], {2, 2}));
  auto b = make(5, 2);
  {
    torch::NoGradGuard no_grad;
    std::map<std::string, torch::Tensor> src;
    for (const auto& p : a->named_parameters()) src.emplace(p.key(), p.value());
    for (const auto& p : a->named_buffers()) src.emplace(p.key(), p.value());
    for (auto& p : b->named_parameters()) p.value().copy_(src.at(p.key()));
    for (auto& p : b->named_buffers()) p.value().copy_(src.at(p.key()));
  }
  b->reload_zch_state();
  b->train();
  EXPECT_EQ(b->zch_module("t").current_iter(), 4);
  const KeyedJaggedTensor probe = batch({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {6, 6});
  EXPECT_EQ(vec(a->remap(probe, false).values()), vec(b->remap(probe, false).values()));
  for (size_t s = 4; s < steps.size(); ++s) {
    sparse::KeyedTensor oa = a->forward(batch(steps[s], {2, 2}));
    sparse::KeyedTensor ob = b->forward(batch(steps[s], {2, 2}));
    EXPECT_TRUE(torch::equal(oa.values(), ob.values())) << "step " << s + 1;
    EXPECT_EQ(vec(a->remap(probe, false).values()), vec(b->remap(probe, false).values())) << "step " << s + 1;
  }
  for (const auto& p : a->named_buffers()) {
    EXPECT_TRUE(torch::equal(p.value(), b->named_buffers()[p.key()])) << p.key();
  }
}

TEST(ZchEmbeddingBagCollection, RefusesMismatchedSizeAndShardedTables) {
  ZchTableConfig t;
  t.table.name = "t";
  t.table.num_embeddings = 8;
  t.table.embedding_dim = 2;
  t.zch.zch_size = 4;
  t.zch.field_path = "feature_configs[0].id_feature.zch";
  BagConfig bag;
  bag.feature_name = "a";
  bag.table_name = "t";
  EXPECT_THROW(ZchEmbeddingBagCollection(std::vector<ZchTableConfig>{t}, std::vector<BagConfig>{bag}), ConfigError);
  t.zch.zch_size = 8;
  std::optional<ZchEmbeddingBagCollection> deferred;
  {
    DeferTableAllocation defer;
    deferred.emplace(std::vector<ZchTableConfig>{t}, std::vector<BagConfig>{bag});
  }
  EXPECT_EQ((*deferred)->named_buffers().size(), 5u);
  try {
    (*deferred)->forward(batch({1}, {1}));
    ADD_FAILURE() << "no error";
  } catch (const NotSupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("not supported yet: feature_configs[0].id_feature.zch with more than one rank"),
              std::string::npos)
        << e.what();
  }
}

FeatureSpec zch_feature(const std::string& name, const std::string& table, int64_t zch_size) {
  FeatureSpec f;
  f.name = name;
  f.num_embeddings = zch_size;
  f.embedding_dim = 2;
  f.embedding_name = table;
  f.init_fn = "nn.init.constant_,val=0.5";
  ZchOptions z;
  z.zch_size = zch_size;
  z.eviction_interval = 1;
  z.field_path = "feature_configs[0].id_feature.zch";
  f.zch = z;
  return f;
}

// Features "u" and "v" share the zch table "user_emb"; "item" has a plain table; the WIDE group's
// "u" gets a zch table of its own ("user_emb_wide").
TEST(ZchEmbeddingGroup, ZchTablesLiveInMcEbcAndShareOneModulePerTable) {
  FeatureSpec item;
  item.name = "item";
  item.num_embeddings = 10;
  item.embedding_dim = 2;
  item.init_fn = "nn.init.constant_,val=2.0";
  std::vector<FeatureSpec> features = {item, zch_feature("u", "user_emb", 4), zch_feature("v", "user_emb", 4)};
  std::vector<FeatureGroupConfig> groups = {{"deep", GroupType::kDeep, {"item", "u", "v"}},
                                            {"wide", GroupType::kWide, {"u"}}};
  EmbeddingGroup group(features, groups, /*wide_embedding_dim=*/2);
  EXPECT_EQ(group->parameter_name_of("user_emb"), "emb_impls.__BASE__.mc_ebc._embedding_module.embedding_bags.user_emb.weight");
  EXPECT_EQ(group->parameter_name_of("item_emb"), "emb_impls.__BASE__.ebc.embedding_bags.item_emb.weight");
  auto params = group->named_parameters();
  EXPECT_TRUE(params.contains("emb_impls.__BASE__.mc_ebc._embedding_module.embedding_bags.user_emb_wide.weight"));
  EXPECT_TRUE(group->named_buffers().contains(
      "emb_impls.__BASE__.mc_ebc._managed_collision_collection._managed_collision_modules.user_emb._mch_sorted_raw_ids"));
  std::vector<std::string> names;
  for (const EmbeddingTable& t : group->tables()) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"item_emb", "user_emb", "user_emb_wide"}));

  // B = 2: u = [[10], [20]], v = [[20], [30]]. user_emb's module sees 10, 20, 20, 30 (one step):
  // all three fit (S - 1 = 3 rows), so every id has a row of its own, reset to 0.5.
  sparse::Batch b;
  b.batch_size = 2;
  const torch::Tensor ones = i64({1, 1});
  b.sparse_features = KeyedJaggedTensor::from_jagged(
      {"item", "u", "v"}, {JaggedTensor{i64({1, 2}), ones, {}}, JaggedTensor{i64({10, 20}), ones, {}},
                           JaggedTensor{i64({20, 30}), ones, {}}});
  group->train();
  auto out = group->forward(b);
  EXPECT_TRUE(torch::equal(out.at("deep"), torch::tensor({{2.0f, 2.0f, 0.5f, 0.5f, 0.5f, 0.5f},
                                                          {2.0f, 2.0f, 0.5f, 0.5f, 0.5f, 0.5f}})));
  EXPECT_TRUE(torch::equal(out.at("wide"), torch::full({2, 2}, 0.5f)));
  auto zch = group->zch_collections();
  ASSERT_EQ(zch.size(), 1u);
  std::vector<int64_t> rows = vec(zch[0].second->zch_module("user_emb").remap(i64({10, 20, 30, 40})));
  EXPECT_EQ(rows[3], 3);  // not admitted: the sentinel's row
  EXPECT_EQ(std::set<int64_t>(rows.begin(), rows.begin() + 3), (std::set<int64_t>{0, 1, 2}));
  EXPECT_EQ(zch[0].second->zch_module("user_emb").current_iter(), 1);
  EXPECT_EQ(zch[0].second->zch_module("user_emb_wide").current_iter(), 1);
}

TEST(ZchEmbeddingGroup, RefusesMixedSharedTables) {
  FeatureSpec plain;
  plain.name = "p";
  plain.num_embeddings = 4;
  plain.embedding_dim = 2;
  plain.embedding_name = "user_emb";
  const std::string want =
      "features 'u' and 'p' share embedding table 'user_emb' but disagree on its zch settings (zch or not, zch_size, "
      "eviction_interval, eviction policy, threshold_filtering_func); give them the same zch or different "
      "embedding_name";
  auto error = [](auto build) {
    try {
      build();
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error([&] {
              EmbeddingGroup(std::vector<FeatureSpec>{zch_feature("u", "user_emb", 4), plain},
                             std::vector<FeatureGroupConfig>{{"deep", GroupType::kDeep, {"u", "p"}}}, 4);
            }),
            want);
  // The same rule in sequence groups (one managed-collision module per table).
  FeatureSpec seq = zch_feature("u", "user_emb", 4);
  seq.is_sequence = true;
  plain.is_sequence = true;
  EXPECT_EQ(error([&] {
              EmbeddingGroup(std::vector<FeatureSpec>{seq, plain},
                             std::vector<FeatureGroupConfig>{
                                 {"seq", GroupType::kSequence, {"u", "p"}, "model_config.feature_groups[1]"}},
                             4);
            }),
            "model_config.feature_groups[1].feature_names[1]: " + want);
}

// Sequence groups (TorchEasyRec's SequenceEmbeddingGroupImpl.mc_ec_dict, tzrec/modules/
// embedding.py): the query feature "q" and the sequence feature "s__i" share the zch table
// "item_emb" (one module); "s__c" has a plain table. Each item's embedding is the row its raw id
// is remapped to, the query's too; the module counts one step per forward.
TEST(ZchEmbeddingGroup, SequenceGroupsRemapItemsAndQueries) {
  FeatureSpec q = zch_feature("q", "item_emb", 8);
  FeatureSpec items = zch_feature("s__i", "item_emb", 8);
  items.is_sequence = true;
  items.value_dim = 1;
  FeatureSpec cat;
  cat.name = "s__c";
  cat.num_embeddings = 5;
  cat.embedding_dim = 2;
  cat.is_sequence = true;
  cat.value_dim = 1;
  EmbeddingGroup group(std::vector<FeatureSpec>{q, items, cat},
                       std::vector<FeatureGroupConfig>{{"seq", GroupType::kSequence, {"q", "s__i", "s__c"}}}, 4);
  EXPECT_EQ(group->parameter_name_of("sequence.item_emb"),
            "seq_emb_impls.__BASE__.mc_ec_dict.2._embedding_module.embeddings.item_emb.weight");
  EXPECT_EQ(group->parameter_name_of("sequence.s__c_emb"), "seq_emb_impls.__BASE__.ec_dict.2.embeddings.s__c_emb.weight");
  EXPECT_TRUE(group->named_parameters().contains(
      "seq_emb_impls.__BASE__.mc_ec_dict.2._embedding_module.embeddings.item_emb.weight"));
  EXPECT_TRUE(group->named_buffers().contains("seq_emb_impls.__BASE__.mc_ec_dict.2._managed_collision_collection."
                                              "_managed_collision_modules.item_emb._mch_sorted_raw_ids"));
  std::vector<std::string> names;
  for (const EmbeddingTable& t : group->tables()) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"sequence.s__c_emb", "sequence.item_emb"}));

  // B = 2: q = [[10], [20]]; s__i items: row 0 {20, 30}, row 1 {-7}; s__c items 1, 2 | 3.
  sparse::Batch b;
  b.batch_size = 2;
  b.sparse_features = KeyedJaggedTensor::from_jagged(
      {"q", "s__i", "s__c"}, {JaggedTensor{i64({10, 20}), i64({1, 1}), {}}, JaggedTensor{i64({20, 30, -7}), i64({2, 1}), {}},
                              JaggedTensor{i64({1, 2, 3}), i64({2, 1}), {}}});
  b.sequence_lengths = {{"s__i", i64({2, 1})}, {"s__c", i64({2, 1})}};
  {
    torch::NoGradGuard no_grad;
    for (EmbeddingTable& t : group->tables()) t.weight.copy_(torch::randn(t.weight.sizes()));
  }
  group->train();
  auto out = group->forward(b);
  auto zch = group->zch_collections();
  ASSERT_EQ(zch.size(), 1u);
  EXPECT_EQ(zch[0].first, "sequence.");
  ZchModule& module = zch[0].second->zch_module("item_emb");
  EXPECT_EQ(module.current_iter(), 1);
  const std::vector<int64_t> rows = vec(module.remap(i64({10, 20, 30, -7})));
  EXPECT_EQ(std::set<int64_t>(rows.begin(), rows.end()).size(), 4u);  // 7 usable rows: every id has its own
  torch::Tensor w_item, w_cat;
  for (EmbeddingTable& t : group->tables()) (t.name == "sequence.item_emb" ? w_item : w_cat) = t.weight.detach();
  EXPECT_TRUE(torch::equal(out.at("seq.query"), torch::stack({w_item[rows[0]], w_item[rows[1]]})));
  torch::Tensor want = torch::zeros({2, 2, 4});
  want[0][0] = torch::cat({w_item[rows[1]], w_cat[1]});
  want[0][1] = torch::cat({w_item[rows[2]], w_cat[2]});
  want[1][0] = torch::cat({w_item[rows[3]], w_cat[3]});
  EXPECT_TRUE(torch::equal(out.at("seq.sequence"), want)) << out.at("seq.sequence") << "\n" << want;
  // Evaluation remaps without counting a step.
  group->eval();
  group->forward(b);
  EXPECT_EQ(module.current_iter(), 1);
}

}  // namespace zch_embedding_bag_collection_test
}  // namespace tzrec::embedding
