// TDM retrieval's beam search on hand-built trees with per-user score tables whose beams are
// worked out in the comments, and the predict tree loaded from tdm_init_tree's files.
#include "tdm/beam_search.h"

#include <map>

#include <gtest/gtest.h>

#include "base/error.h"
#include "data/testing_util.h"
#include "tdm/tree_io.h"

namespace tzrec::tdm {
namespace beam_search_test {

template <typename E, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

// Complete binary tree of 4 levels: node i has children 2i + 1, 2i + 2; leaves 7..14; key = 100 + i.
std::shared_ptr<const PredictTree> binary_tree() {
  std::vector<int64_t> keys;
  std::vector<int> levels;
  std::vector<std::vector<int64_t>> children(15);
  for (int64_t i = 0; i < 15; ++i) {
    keys.push_back(100 + i);
    levels.push_back(i == 0 ? 0 : i < 3 ? 1 : i < 7 ? 2 : 3);
    if (i < 7) children[static_cast<size_t>(i)] = {2 * i + 1, 2 * i + 2};
  }
  return PredictTree::from_parts(keys, levels, children, 0);
}

// Per user, a score per node (0 when not listed).
CandidateScorer table_scorer(std::vector<std::map<int64_t, float>> tables, std::vector<int>* levels_scored) {
  return [tables, levels_scored](int level, const std::vector<std::vector<int64_t>>& candidates) {
    levels_scored->push_back(level);
    std::vector<std::vector<float>> out(candidates.size());
    for (size_t b = 0; b < candidates.size(); ++b) {
      for (int64_t c : candidates[b]) {
        auto it = tables[b].find(c);
        out[b].push_back(it == tables[b].end() ? 0.0f : it->second);
      }
    }
    return out;
  };
}

std::vector<std::vector<int64_t>> keys_of(const PredictTree& tree, const std::vector<std::vector<int64_t>>& nodes) {
  std::vector<std::vector<int64_t>> out;
  for (const auto& row : nodes) {
    out.emplace_back();
    for (int64_t n : row) out.back().push_back(tree.key(n));
  }
  return out;
}

// TorchEasyRec's first recall layer ceil(log_n(2 n R)), kept below the leaf level.
TEST(FirstRecallLevel, AsTorchEasyRec) {
  EXPECT_EQ(first_recall_level(2, 200, 20), 10);  // log2(800) = 9.64
  EXPECT_EQ(first_recall_level(2, 1, 4), 2);      // log2(4) = 2
  EXPECT_EQ(first_recall_level(3, 1, 10), 2);     // log3(6) = 1.63
  EXPECT_EQ(first_recall_level(2, 8, 10), 5);     // log2(32) = 5 exactly
  EXPECT_EQ(first_recall_level(2, 200, 5), 4);    // the leaf level at most
}

// R = 1, n = 2: first level 2. Level 1 {1, 2} is taken unscored; level 2's four candidates keep
// the 2R = 2 best; the leaves under them keep the best one. User 0: level 2 keeps {3, 4} (0.9,
// 0.8 over 6: 0.7), leaves 7..10 give 8 (0.6) — leaf 14's 0.99 is out of the beam. User 1: level
// 2 keeps {5, 6}, the best leaf below is 13.
TEST(BeamSearch, KeepsTwoRPerLevelThenR) {
  const auto tree = binary_tree();
  std::vector<int> scored;
  const auto scorer = table_scorer({{{3, 0.9f}, {4, 0.8f}, {5, 0.1f}, {6, 0.7f}, {7, 0.2f}, {8, 0.6f}, {9, 0.5f},
                                     {10, 0.1f}, {14, 0.99f}},
                                    {{5, 0.9f}, {6, 0.8f}, {11, 0.3f}, {12, 0.2f}, {13, 0.7f}, {14, 0.1f}}},
                                   &scored);
  const auto found = beam_search(*tree, 2, 2, 1, scorer);
  EXPECT_EQ(keys_of(*tree, found), (std::vector<std::vector<int64_t>>{{108}, {113}}));
  EXPECT_EQ(scored, (std::vector<int>{2, 3}));
}

// R = 2: first level ceil(log2 8) = 3, the leaves: every leaf is a candidate, the best two win
// (user 0: 14 at 0.99, then 8 at 0.6), including ties to the earlier leaf (user 1: all 0, so 7, 8).
TEST(BeamSearch, LeafLevelOnlyWhenTheTreeIsSmall) {
  const auto tree = binary_tree();
  std::vector<int> scored;
  const auto scorer = table_scorer({{{8, 0.6f}, {14, 0.99f}, {9, 0.5f}}, {}}, &scored);
  const auto found = beam_search(*tree, 2, 2, 2, scorer);
  EXPECT_EQ(keys_of(*tree, found), (std::vector<std::vector<int64_t>>{{114, 108}, {107, 108}}));
  EXPECT_EQ(scored, (std::vector<int>{3}));
}

// n = 3 with a leaf (node 1) on level 1: it has no children and stays a candidate on level 2.
TEST(BeamSearch, ChildlessNodeStaysCandidate) {
  const auto tree = PredictTree::from_parts({10, 11, 12, 13, 14}, {0, 1, 1, 2, 2}, {{1, 2}, {}, {3, 4}, {}, {}}, 0);
  std::vector<int> scored;
  const auto scorer = table_scorer({{{1, 0.9f}, {3, 0.5f}}, {{4, 0.7f}, {1, 0.1f}}}, &scored);
  const auto found = beam_search(*tree, 2, 3, 1, scorer);
  EXPECT_EQ(keys_of(*tree, found), (std::vector<std::vector<int64_t>>{{11}, {14}}));
}

// tdm_init_tree's files of 4 items (1, 2 in category a; 3, 4 in b) under dir/tree, with `ids`,
// and the sampler config that reads them.
TdmSamplerConfig init_tree_config(const data::testing::TempDir& dir, TreeIds ids) {
  InitTreeOptions o;
  o.item_input_path = dir.write("items.csv", "item_id,cate\n1,a\n2,a\n3,b\n4,b\n");
  o.item_id_field = "item_id";
  o.cate_id_field = "cate";
  o.attr_fields = "cate";
  o.node_edge_output_file = dir.file("tree");
  o.ids = ids;
  init_tree(o);
  TdmSamplerConfig c;
  c.item_input_path = dir.file("tree/node_table.txt");
  c.edge_input_path = dir.file("tree/edge_table.txt");
  c.predict_edge_input_path = dir.file("tree/predict_edge_table.txt");
  c.attr_fields = {"tree_level", "item_id", "cate"};
  c.item_id_field = "item_id";
  c.attr_delimiter = ",";
  c.layer_num_sample = {0, 1, 1};
  c.hash_ids = ids == TreeIds::kText;
  return c;
}

// The predict tree of tdm_init_tree's files (4 items: 3 levels, root 5 with children 6, 7).
TEST(PredictTree, LoadsInitTreeFilesAndChecksThem) {
  data::testing::TempDir dir;
  const TdmSamplerConfig c = init_tree_config(dir, TreeIds::kInteger);
  const auto tree = PredictTree::load(c);
  EXPECT_EQ(tree->num_levels(), 3);
  EXPECT_EQ(tree->key(tree->root()), 5);
  ASSERT_EQ(tree->children(tree->root()).size(), 2u);
  const int64_t first = tree->children(tree->root())[0];
  EXPECT_EQ(tree->key(first), 6);
  EXPECT_EQ(tree->attr(first, 2), "b");
  ASSERT_EQ(tree->children(first).size(), 2u);
  EXPECT_EQ(tree->level_of(tree->children(first)[0]), 2);

  TdmSamplerConfig wrong = c;
  wrong.layer_num_sample = {0, 1, 1, 1};
  EXPECT_NE(error_of<ConfigError>([&] { PredictTree::load(wrong); }).find("4 entries, but the tree in"),
            std::string::npos);
  wrong = c;
  wrong.predict_edge_input_path =
      dir.write("edges.txt", "src_id:int64\tdst_id:int64\tweight:float\n-1\t5\t1.0\n5\t6\t1.0\n6\t99\t1.0\n");
  EXPECT_NE(error_of<DataError>([&] { PredictTree::load(wrong); }).find("edge 6 -> 99: the child is not in the node table"),
            std::string::npos)
      << error_of<DataError>([&] { PredictTree::load(wrong); });
  wrong.predict_edge_input_path =
      dir.write("edges2.txt", "src_id:int64\tdst_id:int64\tweight:float\n-1\t5\t1.0\n5\t1\t1.0\n");
  EXPECT_NE(error_of<DataError>([&] { PredictTree::load(wrong); }).find("the child is on level 2, its parent on level 0"),
            std::string::npos);
}

// The same tree with text ids (USE_HASH_NODE_ID=1): the sentinel "-1" and every id hashed, the
// nodes' ids read from their attrs, errors naming nodes by their ids.
TEST(PredictTree, LoadsHashedInitTreeFiles) {
  data::testing::TempDir dir;
  const TdmSamplerConfig c = init_tree_config(dir, TreeIds::kText);
  const auto tree = PredictTree::load(c);
  EXPECT_EQ(tree->num_levels(), 3);
  EXPECT_EQ(tree->key(tree->root()), static_cast<int64_t>(data::graphlearn_hash64("nonleaf#0")));
  EXPECT_EQ(tree->attr(tree->root(), 1), "nonleaf#0");
  ASSERT_EQ(tree->children(tree->root()).size(), 2u);
  const int64_t first = tree->children(tree->root())[0];
  EXPECT_EQ(tree->attr(first, 1), "nonleaf#1");
  std::vector<std::string> leaves;
  for (int64_t leaf : tree->children(first)) leaves.emplace_back(tree->attr(leaf, 1));
  EXPECT_EQ(leaves, (std::vector<std::string>{"4", "3"}));

  TdmSamplerConfig wrong = c;
  wrong.predict_edge_input_path = dir.write(
      "edges.txt", "src_id:string\tdst_id:string\tweight:float\n-1\tnonleaf#0\t1.0\nnonleaf#0\t4\t1.0\n");
  EXPECT_NE(error_of<DataError>([&] { PredictTree::load(wrong); })
                .find("edge nonleaf#0 -> 4: the child is on level 2, its parent on level 0"),
            std::string::npos)
      << error_of<DataError>([&] { PredictTree::load(wrong); });
  wrong.predict_edge_input_path =
      dir.write("edges2.txt", "src_id:string\tdst_id:string\tweight:float\nnonleaf#0\tnonleaf#1\t1.0\n");
  EXPECT_NE(error_of<DataError>([&] { PredictTree::load(wrong); }).find("no edge from -1 to the root"),
            std::string::npos);
}

}  // namespace beam_search_test
}  // namespace tzrec::tdm
