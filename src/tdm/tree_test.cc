// The TDM tree and tdm_init_tree's files: TorchEasyRec's own tree_builder_test vector (10 items)
// and a 4-item table whose files are worked out by hand in the comments.
#include "tdm/tree.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "data/testing_util.h"
#include "parquet/file_reader.h"
#include "tdm/tree_io.h"

namespace tzrec::tdm {
namespace tree_test {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
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

// tzrec/tools/tdm/gen_tree/tree_builder_test.py: items 0..9 with category str(i); level order
// ids are the 15 non-leaf nodes 10..24, then the leaves 9, 8, ..., 0 on level 4.
TEST(BuildTree, TorchEasyRecBuilderVector) {
  std::vector<TreeItem> items;
  for (int i = 0; i < 10; ++i) {
    TreeItem item;
    item.id = i;
    item.cate = std::to_string(i);
    item.attrs = {AttrValue::of_int(i)};
    item.raw_attrs = {AttrValue::of_double(0.1 * i)};
    items.push_back(item);
  }
  const Tree tree =
      build_tree(items, {{"a", AttrType::kInt64}}, {{"r", AttrType::kDouble}}, 2);
  std::vector<int64_t> ids, levels;
  for (const TreeNode& n : tree.nodes) {
    ids.push_back(n.id);
    levels.push_back(n.level);
  }
  std::vector<int64_t> want_ids, want_levels = {0, 1, 1, 2, 2, 2, 2};
  for (int i = 10; i <= 24; ++i) want_ids.push_back(i);
  for (int i = 9; i >= 0; --i) want_ids.push_back(i);
  for (int i = 0; i < 8; ++i) want_levels.push_back(3);
  for (int i = 0; i < 10; ++i) want_levels.push_back(4);
  EXPECT_EQ(ids, want_ids);
  EXPECT_EQ(levels, want_levels);
  ASSERT_EQ(tree.num_levels(), 5);
  for (size_t k = 15; k < 25; ++k) {
    const TreeNode& n = tree.nodes[k];
    EXPECT_TRUE(n.is_leaf);
    EXPECT_EQ(n.attrs[0].i, n.id);
    EXPECT_EQ(n.raw_attrs[0].d, 0.1 * static_cast<double>(n.id));
  }
  // The root's children: codes 1 and 2, ids 11 and 12.
  EXPECT_EQ(tree.nodes[0].children, (std::vector<int64_t>{1, 2}));
}

// The same vector with text ids (TorchEasyRec's tree_generator_test under USE_HASH_NODE_ID=1):
// the leaves keep their ids as text, the 15 non-leaf nodes are "nonleaf#00" .. "nonleaf#14" (codes
// 0..14, padded to the 2 digits of the largest leaf code 30).
TEST(BuildTree, TorchEasyRecGeneratorVectorWithTextIds) {
  std::vector<TreeItem> items;
  for (int i = 0; i < 10; ++i) {
    TreeItem item;
    item.text_id = std::to_string(i);
    item.cate = std::to_string(i);
    items.push_back(item);
  }
  const Tree tree = build_tree(items, {}, {}, 2, TreeIds::kText);
  std::vector<std::string> ids;
  for (const TreeNode& n : tree.nodes) ids.push_back(tree.id_of(n));
  std::vector<std::string> want;
  for (int x = 10; x <= 24; ++x) want.push_back(fmt::format("nonleaf#{:02d}", x - 10));
  for (int x = 9; x >= 0; --x) want.push_back(std::to_string(x));
  EXPECT_EQ(ids, want);
  ASSERT_EQ(tree.num_levels(), 5);
}

// Text ids sort as text within a category ("10" before "9"), and the padding follows the largest
// leaf code: 3 items give codes 3..6 (one digit).
TEST(BuildTree, TextIdsSortAsText) {
  std::vector<TreeItem> items(3);
  items[0].text_id = "9";
  items[1].text_id = "10";
  items[2].text_id = "b";
  const Tree tree = build_tree(items, {}, {}, 2, TreeIds::kText);
  std::vector<std::string> ids;
  for (const TreeNode& n : tree.nodes) ids.push_back(tree.id_of(n));
  // Sorted "10", "9", "b": gen(0, 3, 0) gives [0, 1) code 2, [1, 3) code 1 -> "9" code 4, "b"
  // code 3; "10" pulled down from 2 to 5. Level order: root, codes 1, 2, then leaves 3, 4, 5.
  EXPECT_EQ(ids, (std::vector<std::string>{"nonleaf#0", "nonleaf#1", "nonleaf#2", "b", "9", "10"}));
}

// Items 1..4, categories a a b b; sorted (a,1) (a,2) (b,3) (b,4). gen(0, 4, 0): [0, 2) gets code
// 2, [2, 4) code 1; then item 1 -> 6, 2 -> 5, 3 -> 4, 4 -> 3. min_code = 2^2 - 1 = 3: no leaf
// moves. Non-leaf ids = 4 + code + 1: root 5, code 1 -> 6 (items 4, 3), code 2 -> 7 (items 2, 1).
// Modes of s (string; item 4's cell is ""): node 7: x 1, y 1 -> first seen x; node 6: y 1, "" 1
// -> y; root: y 2. Means of r (int; item 4 null): node 7 (1 + 2) / 2 = 1.5 -> 2 (half to even);
// node 6: 4; root: 7 / 3 -> 2. Means of f (double): 0.375, 1.5, 0.9375.
const char* kItems =
    "item_id,cate,s,r,f\n"
    "3,b,y,4,1.0\n"
    "1,a,x,1,0.5\n"
    "4,b,,,2.0\n"
    "2,a,y,2,0.25\n";

// tdm_init_tree's options for kItems under dir (tables in dir/tree, serving tree in dir/serving).
InitTreeOptions k_items_options(const data::testing::TempDir& dir, TreeIds ids) {
  InitTreeOptions o;
  o.item_input_path = dir.write("items.csv", kItems);
  o.item_id_field = "item_id";
  o.cate_id_field = "cate";
  o.attr_fields = "s";
  o.raw_attr_fields = " r, f";
  o.node_edge_output_file = dir.file("tree");
  o.tree_output_dir = dir.file("serving");
  o.ids = ids;
  return o;
}

TEST(InitTree, FilesAsTorchEasyRecWritesThem) {
  data::testing::TempDir dir;
  const InitTreeOptions o = k_items_options(dir, TreeIds::kInteger);
  const Tree tree = init_tree(o);
  EXPECT_EQ(tree.num_levels(), 3);
  EXPECT_EQ(read_text(dir.file("tree/node_table.txt")),
            "id:int64\tweight:float\tfeature:string\n"
            "-1\t1.0\t-1,5,y,2,0.9375\n"
            "5\t1.0\t0,5,y,2,0.9375\n"
            "6\t1.0\t1,6,y,4,1.5\n"
            "7\t1.0\t1,7,x,2,0.375\n"
            "4\t1.0\t2,4,,0,2.0\n"
            "3\t1.0\t2,3,y,4,1.0\n"
            "2\t1.0\t2,2,y,2,0.25\n"
            "1\t1.0\t2,1,x,1,0.5\n");
  EXPECT_EQ(read_text(dir.file("tree/edge_table.txt")),
            "src_id:int64\tdst_id:int64\tweight:float\n"
            "4\t6\t1.0\n3\t6\t1.0\n2\t7\t1.0\n1\t7\t1.0\n");
  EXPECT_EQ(read_text(dir.file("tree/predict_edge_table.txt")),
            "src_id:int64\tdst_id:int64\tweight:float\n"
            "-1\t5\t1.0\n5\t6\t1.0\n5\t7\t1.0\n6\t4\t1.0\n6\t3\t1.0\n7\t2\t1.0\n7\t1\t1.0\n");
  EXPECT_EQ(read_text(dir.file("serving/serving_tree")), "3 2\n0 5\n1 6\n2 7\n3 4\n4 3\n5 2\n6 1\n");
  const auto reader = parquet::FileReader::open(dir.file("tree/node_feature/part-0.parquet"));
  EXPECT_EQ(reader->num_rows(), 7);
}

// kItems with text ids (USE_HASH_NODE_ID=1): the same tree (the ids "1" .. "4" sort as the
// integers do), non-leaf ids "nonleaf#<code>" (largest leaf code 6: one digit), string-typed id
// columns in every table.
TEST(InitTree, TextIdFilesAsTorchEasyRecWritesThem) {
  data::testing::TempDir dir;
  InitTreeOptions o = k_items_options(dir, TreeIds::kText);
  init_tree(o);
  EXPECT_EQ(read_text(dir.file("tree/node_table.txt")),
            "id:string\tweight:float\tfeature:string\n"
            "-1\t1.0\t-1,nonleaf#0,y,2,0.9375\n"
            "nonleaf#0\t1.0\t0,nonleaf#0,y,2,0.9375\n"
            "nonleaf#1\t1.0\t1,nonleaf#1,y,4,1.5\n"
            "nonleaf#2\t1.0\t1,nonleaf#2,x,2,0.375\n"
            "4\t1.0\t2,4,,0,2.0\n"
            "3\t1.0\t2,3,y,4,1.0\n"
            "2\t1.0\t2,2,y,2,0.25\n"
            "1\t1.0\t2,1,x,1,0.5\n");
  EXPECT_EQ(read_text(dir.file("tree/edge_table.txt")),
            "src_id:string\tdst_id:string\tweight:float\n"
            "4\tnonleaf#1\t1.0\n3\tnonleaf#1\t1.0\n2\tnonleaf#2\t1.0\n1\tnonleaf#2\t1.0\n");
  EXPECT_EQ(read_text(dir.file("tree/predict_edge_table.txt")),
            "src_id:string\tdst_id:string\tweight:float\n"
            "-1\tnonleaf#0\t1.0\nnonleaf#0\tnonleaf#1\t1.0\nnonleaf#0\tnonleaf#2\t1.0\n"
            "nonleaf#1\t4\t1.0\nnonleaf#1\t3\t1.0\nnonleaf#2\t2\t1.0\nnonleaf#2\t1\t1.0\n");
  EXPECT_EQ(read_text(dir.file("serving/serving_tree")),
            "3 2\n0 nonleaf#0\n1 nonleaf#1\n2 nonleaf#2\n3 4\n4 3\n5 2\n6 1\n");
  const auto reader = parquet::FileReader::open(dir.file("tree/node_feature/part-0.parquet"));
  ASSERT_EQ(reader->num_rows(), 7);
  const parquet::Table table = reader->read({"item_id"});
  EXPECT_EQ(table.column("item_id").bytes(0), "nonleaf#0");
  EXPECT_EQ(table.column("item_id").bytes(6), "1");

  // String ids, errors naming file, line and column.
  o.attr_fields = "";
  o.raw_attr_fields = "";
  o.tree_output_dir = "";
  o.item_input_path = dir.write("text.csv", "item_id,cate\nb7,x\na1,x\n");
  const Tree text = init_tree(o);  // sorted a1, b7: a1 gets code 2, b7 code 1 (level order b7, a1)
  EXPECT_EQ(text.id_of(text.nodes[1]), "b7");
  EXPECT_EQ(text.id_of(text.nodes[2]), "a1");
  o.item_input_path = dir.write("dup.csv", "item_id,cate\nb7,x\na1,x\nb7,y\n");
  EXPECT_EQ(error_of<DataError>([&] { init_tree(o); }),
            o.item_input_path + " line 4 column item_id: item id 'b7' repeats the id of " + o.item_input_path +
                " line 2 column item_id; item ids must be unique");
  o.item_input_path = dir.write("float.csv", "item_id,cate\n1.5,x\n2,x\n");
  EXPECT_EQ(error_of<DataError>([&] { init_tree(o); }),
            o.item_input_path + " line 2 column item_id: the item id column is double; with USE_HASH_NODE_ID=1 ids "
                                "are strings or integers");
  o.item_input_path = dir.write("empty.csv", "item_id,cate\nb7,x\n,x\n");
  EXPECT_EQ(error_of<DataError>([&] { init_tree(o); }),
            o.item_input_path + " line 3 column item_id: the item id is empty; every item needs an id");
}

TEST(InitTree, BadInputNamesFileRowAndColumn) {
  data::testing::TempDir dir;
  InitTreeOptions o;
  o.item_id_field = "item_id";
  o.cate_id_field = "cate";
  o.node_edge_output_file = dir.file("tree");
  o.item_input_path = dir.write("dup.csv", "item_id,cate\n1,a\n2,a\n1,b\n");
  EXPECT_EQ(error_of<DataError>([&] { init_tree(o); }),
            o.item_input_path + " line 4 column item_id: item id 1 repeats the id of " + o.item_input_path +
                " line 2 column item_id; item ids must be unique");
  o.item_input_path = dir.write("noid.csv", "item_id,cate\n1,a\n,a\n");
  EXPECT_EQ(error_of<DataError>([&] { init_tree(o); }),
            o.item_input_path + " line 3 column item_id: the item id is empty; every item needs an integer id");
  o.item_input_path = dir.write("ok.csv", "item_id,cate\n1,a\n2,b\n");
  o.attr_fields = "nope";
  EXPECT_NE(error_of<DataError>([&] { init_tree(o); }).find("nope"), std::string::npos);
  o.attr_fields = "item_id";
  EXPECT_NE(error_of<UsageError>([&] { init_tree(o); }).find("--attr_fields lists the item id field"),
            std::string::npos);
  o.attr_fields = "";
  o.raw_attr_fields = "cate";
  EXPECT_NE(error_of<DataError>([&] { init_tree(o); }).find("raw_attr_fields are averaged"), std::string::npos);
  o.raw_attr_fields = "";
  o.item_input_path = "odps://project/tables/items";
  EXPECT_EQ(error_of<NotSupportedError>([&] { init_tree(o); }),
            "not supported yet: tdm_init_tree --item_input_path odps:// (MaxCompute tables)");
}

// n_cluster 3 with 9 items: TorchEasyRec pulls the leaves with codes 4..7 (below min_code 8) one
// level down (13, 16, 19, 22) and leaves 8..12 where they are.
TEST(BuildTree, WiderTreeKeepsTorchEasyRecCodes) {
  std::vector<TreeItem> items;
  for (int i = 0; i < 9; ++i) {
    TreeItem item;
    item.id = i + 1;
    item.cate = "c";
    items.push_back(item);
  }
  const Tree tree = build_tree(items, {}, {}, 3);
  ASSERT_EQ(tree.num_levels(), 4);
  std::vector<int64_t> last;
  for (int64_t i : tree.levels.back()) last.push_back(tree.nodes[static_cast<size_t>(i)].code);
  EXPECT_EQ(last, (std::vector<int64_t>{13, 16, 19, 22}));
  std::vector<int64_t> level2;
  for (int64_t i : tree.levels[2]) level2.push_back(tree.nodes[static_cast<size_t>(i)].code);
  EXPECT_EQ(level2, (std::vector<int64_t>{4, 5, 6, 7, 8, 9, 10, 11, 12}));
}

}  // namespace tree_test
}  // namespace tzrec::tdm
