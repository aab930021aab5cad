// tdm_cluster_tree: k-means, TreeCluster's balanced split and codes on 1-D embeddings whose
// clusters are worked out by hand in the comments, and the written tree loaded by the TDM
// sampler (which checks the node, edge and level structure).
#include "tdm/tree_cluster.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "data/testing_util.h"
#include "tdm/tdm_sampler.h"

namespace tzrec::tdm {
namespace tree_cluster_test {

std::vector<int64_t> all_rows(int64_t n) {
  std::vector<int64_t> r(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) r[static_cast<size_t>(i)] = i;
  return r;
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

// {0, 1} and {10, 11}: whatever the seeding, Lloyd ends with centers 0.5 and 10.5.
TEST(KMeans, SeparatedGroups) {
  const std::vector<float> data = {0, 10, 1, 11};
  for (uint64_t seed : {0u, 1u, 7u}) {
    const KMeansResult r = kmeans(data.data(), 1, all_rows(4), 2, seed);
    EXPECT_EQ(r.labels[0], r.labels[2]);
    EXPECT_EQ(r.labels[1], r.labels[3]);
    EXPECT_NE(r.labels[0], r.labels[1]);
    EXPECT_FLOAT_EQ(r.centers[static_cast<size_t>(r.labels[0])], 0.5f);
    EXPECT_FLOAT_EQ(r.centers[static_cast<size_t>(r.labels[1])], 10.5f);
  }
}

// Rows 0, 0.1, 0.2, 10 (rows 0..3), n = 2, ave = 2: k-means gives {0, 0.1, 0.2} (center 0.1) and
// {10}. The big cluster keeps its 2 rows nearest to 0.1: row 1 (distance 0), then row 0 (0.1,
// before row 2 at the same distance); row 2 goes to the pool and fills the part of {10}.
TEST(BalancedSplit, TrimsAndRefills) {
  const std::vector<float> data = {0.0f, 0.1f, 0.2f, 10.0f};
  for (uint64_t seed : {0u, 3u}) {
    const auto parts = balanced_split(data.data(), 1, all_rows(4), 2, seed);
    ASSERT_EQ(parts.size(), 2u);
    const auto& small = parts[0].front() == 3 ? parts[0] : parts[1];
    const auto& big = parts[0].front() == 3 ? parts[1] : parts[0];
    EXPECT_EQ(small, (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(big, (std::vector<int64_t>{1, 0}));
  }
}

// Three parts of 7 rows (ave 2): the leftover row goes to part 0.
TEST(BalancedSplit, LeftoverGoesToPartZero) {
  const std::vector<float> data = {0, 0.1f, 0.2f, 0.3f, 5, 5.1f, 10};
  const auto parts = balanced_split(data.data(), 1, all_rows(7), 3, 0);
  size_t total = 0;
  for (const auto& p : parts) total += p.size();
  EXPECT_EQ(total, 7u);
  EXPECT_EQ(parts[0].size(), 3u);
  EXPECT_EQ(parts[1].size(), 2u);
  EXPECT_EQ(parts[2].size(), 2u);
}

// 8 items in pairs {0, 1}, {4, 5}, {100, 101}, {104, 105} (rows 0..7): the root splits the low
// four from the high four, each half into its pairs, and a pair (2 <= n items) gives codes
// 2c + 1, 2c + 2. All 8 leaves land on level 3 (codes 7..14), siblings are the pairs and cousins
// the halves.
TEST(ClusterCodes, PairsAndHalves) {
  const std::vector<float> data = {0, 1, 4, 5, 100, 101, 104, 105};
  const auto codes = cluster_codes(data.data(), 8, 1, 2, 0, 2);
  std::set<int64_t> distinct(codes.begin(), codes.end());
  EXPECT_EQ(distinct.size(), 8u);
  for (int64_t c : codes) {
    EXPECT_GE(c, 7);
    EXPECT_LE(c, 14);
  }
  auto parent = [](int64_t c) { return (c - 1) / 2; };
  for (int i = 0; i < 8; i += 2) EXPECT_EQ(parent(codes[i]), parent(codes[i + 1])) << i;
  EXPECT_EQ(parent(parent(codes[0])), parent(parent(codes[3])));
  EXPECT_EQ(parent(parent(codes[4])), parent(parent(codes[7])));
  EXPECT_NE(parent(parent(codes[0])), parent(parent(codes[4])));
  // Deterministic, and the same with one thread.
  EXPECT_EQ(cluster_codes(data.data(), 8, 1, 2, 0, 1), codes);
}

// Rows 0, 10, 11 with n = 2 (ave = 1): k-means gives {0} and {10, 11}; the pair keeps row 1
// (distance 0.5, first of the tie) and pools row 2, and as no part is below ave the pool joins
// part 0. So row 2 becomes the sibling of whichever row holds part 0 (TorchEasyRec's
// rebalancing), and the other row is a singleton part with its code directly.
TEST(ClusterCodes, SingletonPartAndPoolToPartZero) {
  const std::vector<float> data = {0, 10, 11};
  const auto codes = cluster_codes(data.data(), 3, 1, 2, 0, 1);
  const bool zero_first = codes == std::vector<int64_t>{3, 2, 4};  // parts {0, 2} (code 1), {1} (code 2)
  const bool pair_first = codes == std::vector<int64_t>{2, 3, 4};  // parts {1, 2} (code 1), {0} (code 2)
  EXPECT_TRUE(zero_first || pair_first) << codes[0] << " " << codes[1] << " " << codes[2];
}

// The whole tool on a CSV of 8 items in pairs per category, the pairs of a and b close and those
// of c and d close: the root splits {a, b} from {c, d}, then the pairs. The tables load in the TDM
// sampler, the leaves are the items on level 3, and each pair are siblings.
TEST(ClusterTree, WritesTablesTheSamplerLoads) {
  data::testing::TempDir dir;
  ClusterTreeOptions o;
  o.item_input_path = dir.write("emb.csv",
                                "item_id,cate,item_emb\n"
                                "10,a,\"[0.0, 0.0]\"\n"
                                "11,a,\"[0.0, 1.0]\"\n"
                                "12,b,\"[10.0, 0.0]\"\n"
                                "13,b,\"[10.0, 1.0]\"\n"
                                "14,c,\"[100.0, 0.0]\"\n"
                                "15,c,\"[100.0, 1.0]\"\n"
                                "16,d,\"[110.0, 0.0]\"\n"
                                "17,d,\"[110.0, 1.0]\"\n");
  o.item_id_field = "item_id";
  o.attr_fields = "cate";
  o.node_edge_output_file = dir.file("tree");
  o.tree_output_dir = dir.file("serving");
  const Tree tree = cluster_tree(o);
  ASSERT_EQ(tree.num_levels(), 4);  // 8 items: min code 2^3 - 1 = 7
  int leaves = 0;
  for (const TreeNode& node : tree.nodes) {
    if (!node.is_leaf) continue;
    ++leaves;
    EXPECT_EQ(node.level, 3);
    EXPECT_GE(node.id, 10);
    EXPECT_LE(node.id, 17);
    // Its sibling has its category, which is the parent's mode; the non-leaf ids are 17 + code + 1.
    const TreeNode& p = tree.nodes[static_cast<size_t>(node.parent)];
    ASSERT_EQ(p.children.size(), 2u);
    for (int64_t c : p.children) EXPECT_EQ(tree.nodes[static_cast<size_t>(c)].attrs[0].s, node.attrs[0].s);
    EXPECT_EQ(p.attrs[0].s, node.attrs[0].s);
    EXPECT_EQ(p.id, 18 + p.code);
    const TreeNode& g = tree.nodes[static_cast<size_t>(p.parent)];
    const std::string cousins = node.attrs[0].s == "a" || node.attrs[0].s == "b" ? "ab" : "cd";
    for (int64_t c : g.children) EXPECT_NE(cousins.find(tree.nodes[static_cast<size_t>(c)].attrs[0].s), std::string::npos);
  }
  EXPECT_EQ(leaves, 8);
  TdmSamplerConfig c;
  c.item_input_path = dir.file("tree/node_table.txt");
  c.edge_input_path = dir.file("tree/edge_table.txt");
  c.attr_fields = {"tree_level", "item_id", "cate"};
  c.item_id_field = "item_id";
  c.attr_delimiter = ",";
  c.layer_num_sample = {0, 1, 1, 1};
  const auto sampler = TdmSampler::create(c);
  EXPECT_EQ(sampler->num_levels(), 4);
  std::ifstream serving(dir.file("serving/serving_tree"));
  std::string first;
  std::getline(serving, first);
  EXPECT_EQ(first, "4 2");

  // The same clustering with text ids (USE_HASH_NODE_ID=1): the same codes, leaves named by their
  // ids' text, non-leaf nodes "nonleaf#<code>" (largest leaf code 14: two digits), tables the
  // sampler loads with hashed keys.
  o.ids = TreeIds::kText;
  o.node_edge_output_file = dir.file("text_tree");
  o.tree_output_dir = "";
  const Tree text = cluster_tree(o);
  ASSERT_EQ(text.nodes.size(), tree.nodes.size());
  for (size_t i = 0; i < tree.nodes.size(); ++i) {
    const TreeNode& n = tree.nodes[i];
    EXPECT_EQ(text.nodes[i].code, n.code);
    EXPECT_EQ(text.id_of(text.nodes[i]), n.is_leaf ? std::to_string(n.id) : fmt::format("nonleaf#{:02d}", n.code));
  }
  c.item_input_path = dir.file("text_tree/node_table.txt");
  c.edge_input_path = dir.file("text_tree/edge_table.txt");
  c.hash_ids = true;
  EXPECT_EQ(TdmSampler::create(c)->num_levels(), 4);
}

TEST(ClusterTree, BadInputIsOneError) {
  data::testing::TempDir dir;
  ClusterTreeOptions o;
  o.item_id_field = "item_id";
  o.node_edge_output_file = dir.file("tree");
  o.item_input_path = dir.write("widths.csv", "item_id,item_emb\n1,\"1,2\"\n2,\"1,2,3\"\n");
  EXPECT_NE(error_of<DataError>([&] { cluster_tree(o); }).find("widths.csv line 3 column item_emb: the embedding has 3 "
                                                                "values, earlier rows 2"),
            std::string::npos)
      << error_of<DataError>([&] { cluster_tree(o); });
  o.item_input_path = dir.write("text.csv", "item_id,item_emb\n1,\"1,x\"\n");
  EXPECT_NE(error_of<DataError>([&] { cluster_tree(o); }).find("column item_emb: '1,x' is not a list of numbers"),
            std::string::npos);
  o.item_input_path = dir.write("noemb.csv", "item_id,emb\n1,\"1,2\"\n");
  EXPECT_NE(error_of<Error>([&] { cluster_tree(o); }).find("item_emb"), std::string::npos)
      << error_of<Error>([&] { cluster_tree(o); });
  o.item_input_path = dir.write("dup.csv", "item_id,item_emb\n1,\"1,2\"\n1,\"1,3\"\n");
  EXPECT_NE(error_of<DataError>([&] { cluster_tree(o); }).find("repeats the id"), std::string::npos);
  o.n_cluster = 1;
  EXPECT_NE(error_of<UsageError>([&] { cluster_tree(o); }).find("--n_cluster: 1"), std::string::npos);
}

}  // namespace tree_cluster_test
}  // namespace tzrec::tdm
