// The schema tree of a Parquet file and its leaf columns.
//
// FileMetaData lists schema elements depth-first; Schema rebuilds the tree and, per leaf column,
// the maximum definition / repetition levels and the definition level of each repeated ancestor
// (what the record assembly needs to turn levels into nulls and list offsets).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parquet/metadata.h"
#include "parquet/types.h"

namespace tzrec::parquet {

struct SchemaNode {
  std::string name;
  int parent = -1;  // node index; -1 for the root
  std::vector<int> children;
  Repetition repetition = Repetition::kRequired;  // the root counts as required
  bool is_leaf = false;
  PhysicalType type = PhysicalType::kInt32;  // leaves only
  int32_t type_length = 0;
  ConvertedType converted_type = ConvertedType::kNone;
  LogicalType logical_type;
  int32_t scale = 0;
  int32_t precision = 0;
  int16_t def_level = 0;  // definition level of this node (counting itself)
  int16_t rep_level = 0;  // repetition level of this node (counting itself)
  int leaf_index = -1;    // column index for leaves
};

// How a top-level field is shaped, for printing rows and for consumers that map Parquet to
// their own types.
enum class FieldKind : int8_t {
  kPrimitive,  // one leaf, no repetition
  kList,       // one leaf under one or more repeated levels (LIST, legacy lists, list of list)
  kMap,        // MAP / MAP_KEY_VALUE: a key leaf and a value leaf under one repeated level
  kStruct,     // a group of several leaves without repetition
  kOther,      // anything else (e.g. a list of structs)
};

struct ColumnDescriptor {
  int index = 0;                        // leaf column index (= column chunk index in a row group)
  int node = 0;                         // SchemaNode index of the leaf
  std::vector<std::string> path;        // path_in_schema
  std::string path_string;              // path joined with '.'
  std::string field_name;               // the top-level field it belongs to
  PhysicalType type = PhysicalType::kInt32;
  int32_t type_length = 0;              // FIXED_LEN_BYTE_ARRAY width
  ConvertedType converted_type = ConvertedType::kNone;
  LogicalType logical_type;
  int32_t scale = 0;
  int32_t precision = 0;
  int16_t max_def = 0;
  int16_t max_rep = 0;
  // For each repeated node on the path, outer to inner (size max_rep): its definition level.
  // A list at nesting level k is null when def < repeated_def[k] - 1, empty when
  // def == repeated_def[k] - 1, and has an element when def >= repeated_def[k].
  std::vector<int16_t> repeated_def;
  // Whether each list level can be null (size max_rep), and whether the leaf value can be null.
  std::vector<bool> list_nullable;
  bool leaf_nullable = false;
  // Whether the reader keeps the definition level of each list (size max_rep) / leaf slot: when
  // more than one optional node lies between that level and the repeated node above it (or the
  // root), e.g. `optional group s { optional int32 x }`, validity alone cannot tell a null `s`
  // from a present `s` whose `x` is null.
  std::vector<bool> list_keeps_def;
  bool leaf_keeps_def = false;

  bool is_string() const;  // BYTE_ARRAY annotated STRING/UTF8/ENUM/JSON
  bool is_float16() const;  // FIXED_LEN_BYTE_ARRAY(2) annotated FLOAT16 (see float16_to_float)
};

class Schema {
 public:
  Schema() = default;
  // Throws DecodeError for malformed trees (child counts that do not add up, leaves without a
  // type, nesting deeper than 100 levels, ...).
  static Schema build(const std::vector<SchemaElement>& elements);

  const std::vector<SchemaNode>& nodes() const { return nodes_; }
  const std::vector<ColumnDescriptor>& columns() const { return columns_; }
  int num_columns() const { return static_cast<int>(columns_.size()); }
  const ColumnDescriptor& column(int i) const { return columns_[static_cast<size_t>(i)]; }

  // Top-level fields (children of the root), in order.
  const std::vector<int>& fields() const { return nodes_.front().children; }
  FieldKind field_kind(int node) const;
  // Leaf column indices under a node, in order.
  std::vector<int> leaves_of(int node) const;

  // Leaf column by dotted path ("a.list.element"); -1 when absent.
  int find_column(std::string_view path) const;
  // Top-level field node by name; -1 when absent.
  int find_field(std::string_view name) const;

  // One line per node, indented: "optional group e (LIST)", "  repeated int32 element".
  std::string to_string() const;

 private:
  std::vector<SchemaNode> nodes_;
  std::vector<ColumnDescriptor> columns_;
};

}  // namespace tzrec::parquet
