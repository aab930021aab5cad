// TDMSampler on hand-built trees: positives per level, negatives per level with graphlearn's
// exclusion set growing over the batch's rows, remain_ratio level choice, and the table checks.
#include "tdm/tdm_sampler.h"

#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "data/testing_util.h"
#include "tdm/tree_io.h"
#include "tzrec/protos/data.pb.h"

namespace tzrec::tdm {
namespace tdm_sampler_test {

// root 100; level 1: 10 (leaves 1, 2), 11 (leaves 3, 4); the sentinel row -1 as tdm_init_tree
// writes it.
const char* kNodes =
    "id:int64\tweight:float\tfeature:string\n"
    "-1\t1.0\t-1,100,r\n"
    "100\t1.0\t0,100,r\n"
    "10\t1.0\t1,10,c10\n"
    "11\t1.0\t1,11,c11\n"
    "1\t1.0\t2,1,a\n"
    "2\t1.0\t2,2,b\n"
    "3\t1.0\t2,3,c\n"
    "4\t1.0\t2,4,d\n";
const char* kEdges =
    "src_id:int64\tdst_id:int64\tweight:float\n"
    "1\t10\t1.0\n2\t10\t1.0\n3\t11\t1.0\n4\t11\t1.0\n";

struct Fixture {
  data::testing::TempDir dir;
  TdmSamplerConfig config;
  Fixture(const std::string& nodes = kNodes, const std::string& edges = kEdges) {
    config.item_input_path = dir.write("node_table.txt", nodes);
    config.edge_input_path = dir.write("edge_table.txt", edges);
    config.attr_fields = {"tree_level", "item_id", "cat"};
    config.item_id_field = "item_id";
    config.attr_delimiter = ",";
    config.layer_num_sample = {0, 1, 1};
    config.load_threads = 1;
  }
};

std::string where(int64_t r) { return "row " + std::to_string(r); }

std::vector<int64_t> keys(const TdmSampler& s, const std::vector<int64_t>& nodes) {
  std::vector<int64_t> out;
  for (int64_t n : nodes) out.push_back(s.nodes().key(n));
  return out;
}

template <typename E, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

// The tables of `tree` under dir/tree and a config reading them (attrs: tree_level, item_id).
TdmSamplerConfig tree_config(const data::testing::TempDir& dir, const Tree& tree, std::vector<uint32_t> layer_num_sample) {
  write_tree_tables(tree, dir.file("tree"), "item_id", ",");
  TdmSamplerConfig c;
  c.item_input_path = dir.file("tree/node_table.txt");
  c.edge_input_path = dir.file("tree/edge_table.txt");
  c.attr_fields = {"tree_level", "item_id"};
  c.item_id_field = "item_id";
  c.attr_delimiter = ",";
  c.layer_num_sample = std::move(layer_num_sample);
  c.hash_ids = tree.ids == TreeIds::kText;
  return c;
}

TEST(TdmSamplerConfig, InsertsTreeLevelAndItemId) {
  protos::DataConfig dc;
  auto* t = dc.mutable_tdm_sampler();
  t->set_item_input_path("n");
  t->set_edge_input_path("e");
  t->set_item_id_field("item_id");
  t->add_attr_fields("cate_id");
  t->add_layer_num_sample(0);
  t->add_layer_num_sample(1);
  const auto c = tdm_sampler_config(dc);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->attr_fields, (std::vector<std::string>{"tree_level", "item_id", "cate_id"}));
  EXPECT_EQ(c->attr_delimiter, ":");
  t->set_num_eval_sample(3);
  EXPECT_EQ(error_of<NotSupportedError>([&] { tdm_sampler_config(dc); }),
            "not supported yet: data_config.tdm_sampler.num_eval_sample");
  t->clear_num_eval_sample();
  EXPECT_FALSE(tdm_sampler_config(dc)->hash_ids);
  setenv("USE_HASH_NODE_ID", "1", 1);
  EXPECT_TRUE(tdm_sampler_config(dc)->hash_ids);
  unsetenv("USE_HASH_NODE_ID");
  dc.mutable_negative_sampler();
  EXPECT_FALSE(tdm_sampler_config(dc).has_value());
}

TEST(TdmSampler, AncestorsAndNegativesPerLevel) {
  Fixture f;
  const auto s = TdmSampler::create(f.config);
  EXPECT_EQ(s->num_levels(), 3);
  TdmSamples out;
  s->sample({1, 3}, 7, where, &out);
  EXPECT_EQ(out.remain_levels, (std::vector<int>{1}));
  EXPECT_EQ(out.pos_per_row, 1);
  EXPECT_EQ(out.neg_per_row, 2);  // layer_num_sample[1] + layer_num_sample[2]
  EXPECT_EQ(keys(*s, out.pos_nodes), (std::vector<int64_t>{10, 11}));
  const std::vector<int64_t> neg = keys(*s, out.neg_nodes);
  ASSERT_EQ(neg.size(), 4u);
  // Row 0, level 1: the only other level-1 node.
  EXPECT_EQ(neg[0], 11);
  // Row 0, leaves: another leaf.
  EXPECT_TRUE(neg[1] == 2 || neg[1] == 3 || neg[1] == 4) << neg[1];
  // Row 1, level 1: 10 and 11 are both excluded by now (graphlearn's set grows over the rows),
  // so the draw falls back to the whole table.
  EXPECT_TRUE(neg[2] != 10 && neg[2] != 11) << neg[2];
  // Row 1, leaves: not its own leaf 3, not row 0's leaf 1 nor row 0's negative.
  EXPECT_TRUE(neg[3] != 3 && neg[3] != 1 && neg[3] != neg[1]) << neg[3];
  // Deterministic for a seed.
  TdmSamples again;
  s->sample({1, 3}, 7, where, &again);
  EXPECT_EQ(again.neg_nodes, out.neg_nodes);
  EXPECT_EQ(s->attr(out.pos_nodes[0], 2), "c10");
  EXPECT_EQ(s->attr(out.pos_nodes[0], 0), "1");
}

TEST(TdmSampler, MoreNegativesThanALevelHolds) {
  Fixture f;
  f.config.layer_num_sample = {0, 2, 3};
  const auto s = TdmSampler::create(f.config);
  int all_leaves = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    TdmSamples out;
    s->sample({1}, seed, where, &out);
    const std::vector<int64_t> neg = keys(*s, out.neg_nodes);
    ASSERT_EQ(neg.size(), 5u);
    EXPECT_EQ(neg[0], 11);                                // the level's only other node
    EXPECT_TRUE(neg[1] != 10 && neg[1] != 11 && neg[1] != neg[0]);  // then the whole table
    // Leaves: 3 distinct nodes other than the positive; usually the other three leaves, but when
    // graphlearn's rounds of 3 draws over the level miss one, the whole table fills in.
    const std::set<int64_t> leaves(neg.begin() + 2, neg.end());
    EXPECT_EQ(leaves.size(), 3u);
    EXPECT_EQ(leaves.count(1), 0u);
    all_leaves += leaves == std::set<int64_t>{2, 3, 4};
  }
  EXPECT_GE(all_leaves, 10);
}

TEST(TdmSampler, RemainRatioKeepsLevelsByProbability) {
  // 8 items, n_cluster 2: levels 0..3, leaves on level 3, two middle levels.
  data::testing::TempDir dir;
  std::vector<TreeItem> items;
  for (int i = 1; i <= 8; ++i) {
    TreeItem item;
    item.id = i;
    item.cate = "c";
    items.push_back(item);
  }
  const Tree tree = build_tree(items, {}, {}, 2);
  TdmSamplerConfig c = tree_config(dir, tree, {0, 1, 1, 2});
  const auto all = TdmSampler::create(c);
  TdmSamples out;
  all->sample({5}, 1, where, &out);
  EXPECT_EQ(out.remain_levels, (std::vector<int>{1, 2}));
  // Item 5's ancestors, from the tree's parent links, level 1 first.
  const TreeNode* leaf = nullptr;
  for (const auto& n : tree.nodes) {
    if (n.id == 5) leaf = &n;
  }
  ASSERT_NE(leaf, nullptr);
  const int64_t parent = tree.nodes[static_cast<size_t>(leaf->parent)].id;
  const int64_t grand = tree.nodes[static_cast<size_t>(tree.nodes[static_cast<size_t>(leaf->parent)].parent)].id;
  EXPECT_EQ(keys(*all, out.pos_nodes), (std::vector<int64_t>{grand, parent}));
  EXPECT_EQ(out.neg_per_row, 4);

  // RECIPROCAL over two middle levels: p ∝ (1/2, 1/1), one level kept (round(0.5 * 2) = 1).
  c.remain_ratio = 0.5f;
  c.probability_type = "RECIPROCAL";
  const auto some = TdmSampler::create(c);
  int level2 = 0;
  const int trials = 3000;
  for (int seed = 0; seed < trials; ++seed) {
    some->sample({5}, static_cast<uint64_t>(seed), where, &out);
    ASSERT_EQ(out.remain_levels.size(), 1u);
    EXPECT_EQ(out.pos_per_row, 1);
    EXPECT_EQ(out.neg_per_row, c.layer_num_sample[static_cast<size_t>(out.remain_levels[0])] + 2);
    level2 += out.remain_levels[0] == 2;
  }
  EXPECT_NEAR(static_cast<double>(level2) / trials, 2.0 / 3.0, 0.04);
  c.probability_type = "LINEAR";
  EXPECT_EQ(error_of<ConfigError>([&] { TdmSampler::create(c); }),
            "data_config.tdm_sampler.probability_type: 'LINEAR' is not UNIFORM, ARITHMETIC or RECIPROCAL");
}

// USE_HASH_NODE_ID=1: tables written by the tree tool with text ids ("nonleaf#<code>" above the
// leaves "i1" .. "i8"), keys hashed from the ids' text (graphlearn's Hash64), positives and
// negatives by level, and messages naming nodes by their ids.
TEST(TdmSampler, HashedIdsAsTheTreeToolsWriteThem) {
  data::testing::TempDir dir;
  std::vector<TreeItem> items(8);
  for (int i = 0; i < 8; ++i) {
    items[static_cast<size_t>(i)].text_id = "i" + std::to_string(i + 1);
    items[static_cast<size_t>(i)].cate = "c";
  }
  TdmSamplerConfig c = tree_config(dir, build_tree(items, {}, {}, 2, TreeIds::kText), {0, 1, 1, 2});
  const auto s = TdmSampler::create(c);
  const auto key = [](const std::string& id) { return static_cast<int64_t>(data::graphlearn_hash64(id)); };
  TdmSamples out;
  s->sample({key("i5"), key("i2")}, 3, where, &out);
  // Sorted i1 .. i8: gen gives i1..i4 codes 14, 13, 12, 11 and i5..i8 codes 10, 9, 8, 7; i5 (code
  // 10) has ancestors 4 (level 2) and 1 (level 1), i2 (code 13) ancestors 6 and 2.
  std::vector<std::string> pos;
  for (int64_t n : out.pos_nodes) pos.emplace_back(s->attr(n, 1));
  EXPECT_EQ(pos, (std::vector<std::string>{"nonleaf#01", "nonleaf#04", "nonleaf#02", "nonleaf#06"}));
  // Row 0's negatives: the other level-1 node, a level-2 node, two leaves.
  ASSERT_EQ(out.neg_per_row, 4);
  EXPECT_EQ(s->attr(out.neg_nodes[0], 1), "nonleaf#02");
  EXPECT_EQ(s->level_of(out.neg_nodes[1]), 2);
  EXPECT_NE(s->attr(out.neg_nodes[1], 1), "nonleaf#04");
  EXPECT_EQ(s->attr(out.neg_nodes[2], 1)[0], 'i');
  EXPECT_EQ(s->attr(out.neg_nodes[3], 1)[0], 'i');
  EXPECT_EQ(error_of<DataError>([&] { s->sample({key("zz")}, 0, where, &out); }),
            fmt::format("row 0: item id <hashed id {}> is not in the tree's node table {} "
                        "(data_config.tdm_sampler.item_input_path); rebuild the tree with every item of the data",
                        key("zz"), c.item_input_path));
  EXPECT_NE(error_of<DataError>([&] { s->sample({key("nonleaf#02")}, 0, where, &out); })
                .find("row 0: item id nonleaf#02 is a node on level 1 of the tree without ancestors"),
            std::string::npos);
  // A broken edge table: the message names the line and the nodes by their ids.
  c.edge_input_path = dir.write("edges.txt", "src_id:string\tdst_id:string\tweight:float\ni1\tnonleaf#01\t1.0\n"
                                             "i1\tnonleaf#02\t1.0\n");
  EXPECT_EQ(error_of<DataError>([&] { TdmSampler::create(c); }),
            c.edge_input_path + " line 3 (data_config.tdm_sampler.edge_input_path): edge i1 -> nonleaf#02: leaf i1 "
                                "has two ancestors on level 1 (nonleaf#01 and nonleaf#02)");
}

TEST(TdmSamplerErrors, TablesAndConfig) {
  {
    Fixture f(kNodes, "src_id:int64\tdst_id:int64\tweight:float\n1\t10\t1.0\n2\t99\t1.0\n3\t11\t1.0\n4\t11\t1.0\n");
    EXPECT_EQ(error_of<DataError>([&] { TdmSampler::create(f.config); }),
              f.config.edge_input_path +
                  " line 3 (data_config.tdm_sampler.edge_input_path): edge 2 -> 99: node 99 is not in the node "
                  "table " +
                  f.config.item_input_path);
  }
  {
    Fixture f(kNodes, "src_id:int64\tdst_id:int64\tweight:float\n1\t2\t1.0\n2\t10\t1.0\n3\t11\t1.0\n4\t11\t1.0\n");
    EXPECT_NE(error_of<DataError>([&] { TdmSampler::create(f.config); })
                  .find("line 2 (data_config.tdm_sampler.edge_input_path): edge 1 -> 2: ancestor 2 is on level 2"),
              std::string::npos);
  }
  {
    Fixture f;
    f.config.layer_num_sample = {0, 1, 1, 1};
    EXPECT_EQ(error_of<ConfigError>([&] { TdmSampler::create(f.config); }),
              "data_config.tdm_sampler.layer_num_sample: 4 entries, but the tree in " + f.config.item_input_path +
                  " has 3 levels (0 .. 2); give one entry per level, root first (the config and the tree files do "
                  "not match)");
    f.config.layer_num_sample = {1, 1, 1};
    EXPECT_EQ(error_of<ConfigError>([&] { TdmSampler::create(f.config); }),
              "data_config.tdm_sampler.layer_num_sample: the first entry (the root level) must be 0");
  }
  {
    Fixture f;
    const auto s = TdmSampler::create(f.config);
    TdmSamples out;
    EXPECT_NE(error_of<DataError>([&] { s->sample({1, 77}, 0, where, &out); })
                  .find("row 1: item id 77 is not in the tree's node table"),
              std::string::npos);
    EXPECT_NE(error_of<DataError>([&] { s->sample({10}, 0, where, &out); })
                  .find("row 0: item id 10 is a node on level 1 of the tree without ancestors"),
              std::string::npos);
  }
}

}  // namespace tdm_sampler_test
}  // namespace tzrec::tdm
