// `tzrec tdm_init_tree` (TorchEasyRec tzrec/tools/tdm/init_tree.py, docs/tzrec-compatibility.md
// §3.5): reads the item table, builds the tree (tree.h) and writes the tables TDM trains and
// serves from (no torch).
//
// Item table: `item_input_path` ending in ".csv" (CSV with a header line, column types inferred
// as pyarrow's read_csv does for int64 / double / string: a column whose non-null cells are all
// integers is int64, else all numbers double, else string; "", "NULL", "null", "NaN", "nan",
// "N/A", "NA" ... are nulls in number columns, and strings stay as they are) or ".parquet"
// (a file, comma list or glob; INT32 / INT64 / FLOAT / DOUBLE / BOOLEAN / string scalar columns).
// Columns read: item_id_field (integers; a null or non-integer id is an error; with text ids —
// TreeIds::kText, USE_HASH_NODE_ID=1 — integer or string cells, as text, a null, empty or other
// id an error), cate_id_field
// (any scalar, compared as text), attr_fields and raw_attr_fields (comma-separated names).
//
// Output under node_edge_output_file (a directory, created), as TorchEasyRec writes it:
//   node_table.txt          "id:int64\tweight:float\tfeature:string", then a sentinel row
//                           "-1\t1.0\t-1<d><root id><d><root attrs>..." (graphlearn's handle on the
//                           root) and one row per node in level order:
//                           "<id>\t1.0\t<level><d><id>[<d><attrs joined by d>][<d><raw attrs>]"
//                           (d = attr_delimiter; values as Python's str(); a null attr is empty, a
//                           null raw attr "0"; the attr / raw attr parts only when those fields
//                           are set)
//   edge_table.txt          "src_id:int64\tdst_id:int64\tweight:float", per deepest leaf (last
//                           level) its ancestors below the root, nearest first: "<leaf>\t<anc>\t1.0"
//   predict_edge_table.txt  the same header, "-1\t<root id>\t1.0", then every parent -> child
//                           edge, parents in level order
//   node_feature/part-0.parquet  one row per node in level order: item_id_field (int64), the
//                           attr and raw attr columns with their input types
// With tree_output_dir: <tree_output_dir>/serving_tree: "<levels> <n_cluster>" then
// "<code> <id>" per node in level order.
// With text ids the three tables' id columns are typed "string" (…"id:string\tweight:float…",
// "src_id:string\tdst_id:string…"), the sentinel stays "-1", non-leaf ids are "nonleaf#<code>"
// (tree.h) and node_feature's id column is a string column.
// odps:// paths are refused (NotSupportedError).
// Errors name the file, row (CSV: line) and column.
#pragma once

#include <string>
#include <vector>

#include "tdm/tree.h"

namespace tzrec::tdm {

struct InitTreeOptions {
  std::string item_input_path;
  std::string item_id_field;
  std::string cate_id_field;
  std::string attr_fields;      // comma-separated, may be empty
  std::string raw_attr_fields;  // comma-separated, may be empty
  std::string attr_delimiter = ",";
  std::string tree_output_dir;  // empty: no serving tree
  std::string node_edge_output_file;
  int n_cluster = 2;
  TreeIds ids = TreeIds::kInteger;  // kText: USE_HASH_NODE_ID=1
};

// TreeIds::kText when env USE_HASH_NODE_ID is "1" (TorchEasyRec's switch for string ids), else
// kInteger.
TreeIds tree_ids_from_environment();

// Trimmed non-empty names of a comma-separated list (TorchEasyRec's x.strip() of split(",")).
std::vector<std::string> split_field_list(const std::string& list);

// The item table as tree items and the attr / raw attr columns with their types. Throws
// DataError naming file, row / line and column (missing column, null or non-integer id,
// duplicate id, unsupported type), NotSupportedError for odps:// or another suffix.
// With `embedding_field` (tdm_cluster_tree): also that column, a list<float> / list<double> or text
// of numbers ("[0.1, 0.2]", "0.1,0.2") per row, all of one width (DataError naming the row
// otherwise), into `embeddings` [items x embedding_dim] row-major; cate_id_field may be empty.
struct ItemTable {
  std::vector<TreeItem> items;
  std::vector<AttrColumn> attr_columns;
  std::vector<AttrColumn> raw_attr_columns;
  std::vector<float> embeddings;
  int64_t embedding_dim = 0;
};
ItemTable read_item_table(const InitTreeOptions& options, const std::string& embedding_field = "");

// Writes node_table.txt, edge_table.txt, predict_edge_table.txt and node_feature/ under `dir`.
void write_tree_tables(const Tree& tree, const std::string& dir, const std::string& item_id_field,
                       const std::string& attr_delimiter);
// Writes <dir>/serving_tree.
void write_serving_tree(const Tree& tree, const std::string& dir);

// The whole tool: read, build, write. Returns the tree.
Tree init_tree(const InitTreeOptions& options);

}  // namespace tzrec::tdm
