// The TDM item tree (TorchEasyRec tzrec/tools/tdm/gen_tree/tree_generator.py and tree_builder.py,
// docs/tzrec-compatibility.md §3.5): a complete n-ary tree over the items, built from the item
// table by `tzrec tdm_init_tree` and by gen_data for TDM configs (no torch).
//
// Building (n = n_cluster >= 2, N items):
//   1. items are sorted by (category text, item id); a null category is "".
//   2. leaf codes: gen(start, end, code) over the sorted items — one item: it gets `code`; more:
//      for i in [0, n), items [start + i (end - start) / n, start + (i + 1) (end - start) / n)
//      (divisions in floating point, truncated) recurse with code n * code + n - i, so the first
//      slice gets the highest child code. gen(0, N, 0).
//   3. leaves are pulled down: min_code = n^ceil(log(N) / log(n)) - 1 (floating-point logs, as
//      Python's math.log(N, n)); while a leaf's code < min_code it becomes code * n + 1. (For
//      n > 2 this leaves some leaves on the level above the last, as TorchEasyRec does.)
//   4. every ancestor code of a leaf ((code - 1) / n, up to 0) becomes a non-leaf node; its id is
//      max(0, max leaf id) + code + 1 — with text ids (USE_HASH_NODE_ID=1, below)
//      "nonleaf#<code>", the code zero-padded to the digits of the largest leaf code, so that
//      the ids of one tree sort as text in code order —; its attrs are the per-column modes of
//      its leaves' attrs and its raw attrs the per-column means of its leaves' raw attrs (see
//      below).
//   5. a node's parent is node (code - 1) / n; children are kept in ascending code order.
// Text ids (TreeIds::kText, TorchEasyRec's USE_HASH_NODE_ID=1): items are named by text (the
// id column cast to string); step 1 compares the ids as text; the tables hash them later.
// Levels: the root is level 0; nodes are listed level by level, each level in its parents'
// child order (anytree's level-order walk), which is also ascending code order.
//
// Modes (attr columns): string columns — the most frequent value, nulls counted as a value of
// their own, ties to the value seen first (leaves in sorted order); other columns — the most
// frequent non-null value, ties to the smallest (Arrow's mode); all null: null.
// Means (raw attr columns, integer or floating point): the mean of the non-null values in double;
// integer columns round it half to even; the result has the column's type (float32 columns
// round to float); all null: null.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tzrec::tdm {

// How nodes are named: integer ids, or text ids (USE_HASH_NODE_ID=1).
enum class TreeIds { kInteger, kText };

// The type of an attribute column, as Arrow reads it.
enum class AttrType { kInt32, kInt64, kFloat, kDouble, kBool, kString };

const char* attr_type_name(AttrType type);

struct AttrValue {
  bool is_null = true;
  int64_t i = 0;   // integer and bool columns
  double d = 0;    // float (the float's exact value) and double columns
  std::string s;   // string columns

  static AttrValue null() { return AttrValue{}; }
  static AttrValue of_int(int64_t v) {
    AttrValue a;
    a.is_null = false;
    a.i = v;
    return a;
  }
  static AttrValue of_double(double v) {
    AttrValue a;
    a.is_null = false;
    a.d = v;
    return a;
  }
  static AttrValue of_string(std::string v) {
    AttrValue a;
    a.is_null = false;
    a.s = std::move(v);
    return a;
  }
};

struct AttrColumn {
  std::string name;
  AttrType type = AttrType::kString;
};

// Python's str() of a pyarrow scalar of `type` (TorchEasyRec writes attrs with str(scalar)):
// integers in decimal, floats as python_float_repr, bools "True" / "False", strings as they are.
// A null value: `null_text`.
std::string python_str(const AttrValue& v, AttrType type, const std::string& null_text);

// One item of the item table: a leaf of the tree.
struct TreeItem {
  int64_t id = 0;       // TreeIds::kInteger
  std::string text_id;  // TreeIds::kText
  std::string cate;
  std::vector<AttrValue> attrs;      // one per attr column
  std::vector<AttrValue> raw_attrs;  // one per raw attr column
};

struct TreeNode {
  int64_t code = 0;
  int64_t id = 0;       // TreeIds::kInteger
  std::string text_id;  // TreeIds::kText
  int level = 0;
  bool is_leaf = false;
  int64_t parent = -1;  // index into Tree::nodes (-1: the root)
  std::vector<int64_t> children;  // indices into Tree::nodes, ascending code
  std::vector<AttrValue> attrs;
  std::vector<AttrValue> raw_attrs;
};

struct Tree {
  int n_cluster = 2;
  TreeIds ids = TreeIds::kInteger;
  std::vector<AttrColumn> attr_columns;
  std::vector<AttrColumn> raw_attr_columns;
  std::vector<TreeNode> nodes;  // level order: nodes[0] is the root
  // Node indices per level (levels[0] = {0}); the last level holds the deepest leaves.
  std::vector<std::vector<int64_t>> levels;

  int num_levels() const { return static_cast<int>(levels.size()); }
  const TreeNode& root() const { return nodes.front(); }
  // A node's id as the tables write it.
  std::string id_of(const TreeNode& node) const {
    return ids == TreeIds::kText ? node.text_id : std::to_string(node.id);
  }
};

// Builds the tree of `items` (at least one; ids distinct — the caller reports duplicates), named
// by `ids` (TreeItem::id or TreeItem::text_id). Throws ConfigError for n_cluster < 2, DataError
// for a raw attr column that is not numeric.
Tree build_tree(std::vector<TreeItem> items, std::vector<AttrColumn> attr_columns,
                std::vector<AttrColumn> raw_attr_columns, int n_cluster, TreeIds ids = TreeIds::kInteger);

// Steps 3 - 5 above for leaf codes given by the caller (TorchEasyRec's TreeBuilder.build, as
// tdm_cluster_tree uses it): `codes[i]` is item i's code (distinct, >= 0), items keep their order
// (modes break ties by it). DataError for two items with one code (after pulling down).
Tree build_tree_from_codes(std::vector<TreeItem> items, std::vector<int64_t> codes, std::vector<AttrColumn> attr_columns,
                           std::vector<AttrColumn> raw_attr_columns, int n_cluster, TreeIds ids = TreeIds::kInteger);

}  // namespace tzrec::tdm
