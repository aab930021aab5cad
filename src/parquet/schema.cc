#include "parquet/schema.h"

#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "parquet/errors.h"

namespace tzrec::parquet {
namespace {

constexpr int kMaxSchemaDepth = 100;

bool is_map_annotated(const SchemaNode& n) {
  return n.converted_type == ConvertedType::kMap || n.converted_type == ConvertedType::kMapKeyValue ||
         n.logical_type.kind == LogicalType::Kind::kMap;
}

class TreeBuilder {
 public:
  TreeBuilder(const std::vector<SchemaElement>& elements, std::vector<SchemaNode>* nodes)
      : elements_(elements), nodes_(nodes) {}

  // Builds node `index` (already allocated) and its subtree; returns the next element index.
  size_t build(size_t index, int parent, int depth) {
    if (depth > kMaxSchemaDepth) throw_decode_error(fmt::format("schema nested deeper than {} levels", kMaxSchemaDepth));
    const SchemaElement& e = elements_[index];
    SchemaNode& n = (*nodes_)[index];
    n.name = e.name;
    n.parent = parent;
    n.repetition = parent < 0 ? Repetition::kRequired : e.repetition.value_or(Repetition::kRequired);
    if (static_cast<int>(n.repetition) > 2) {
      throw_decode_error(fmt::format("schema element '{}' has unsupported repetition {}", e.name,
                                     static_cast<int>(n.repetition)));
    }
    n.converted_type = e.converted_type;
    n.logical_type = e.logical_type;
    n.scale = e.scale;
    n.precision = e.precision;
    const SchemaNode* p = parent < 0 ? nullptr : &(*nodes_)[static_cast<size_t>(parent)];
    int def = (p ? p->def_level : 0) + (parent >= 0 && n.repetition != Repetition::kRequired ? 1 : 0);
    int rep = (p ? p->rep_level : 0) + (n.repetition == Repetition::kRepeated ? 1 : 0);
    if (def > INT16_MAX || rep > INT16_MAX) throw_decode_error("schema levels overflow");
    n.def_level = static_cast<int16_t>(def);
    n.rep_level = static_cast<int16_t>(rep);
    size_t next = index + 1;
    if (e.type && parent >= 0) {
      if (static_cast<int>(*e.type) > 7) {
        throw_decode_error(fmt::format("schema element '{}' has unknown physical type {}", e.name,
                                       static_cast<int>(*e.type)));
      }
      n.is_leaf = true;
      n.type = *e.type;
      n.type_length = e.type_length;
      if (n.type == PhysicalType::kFixedLenByteArray && (e.type_length <= 0 || e.type_length > (1 << 24))) {
        throw_decode_error(fmt::format("FIXED_LEN_BYTE_ARRAY column '{}' has invalid type_length {}", e.name,
                                       e.type_length));
      }
      return next;
    }
    if (e.num_children < 0) throw_decode_error(fmt::format("schema element '{}' has {} children", e.name, e.num_children));
    for (int32_t c = 0; c < e.num_children; ++c) {
      if (next >= elements_.size()) {
        throw_decode_error(fmt::format("schema element '{}' announces {} children but the schema ends after {}", e.name,
                                       e.num_children, c));
      }
      n.children.push_back(static_cast<int>(next));
      next = build(next, static_cast<int>(index), depth + 1);
    }
    return next;
  }

 private:
  const std::vector<SchemaElement>& elements_;
  std::vector<SchemaNode>* nodes_;
};

}  // namespace

bool ColumnDescriptor::is_string() const {
  if (type != PhysicalType::kByteArray) return false;
  using K = LogicalType::Kind;
  return logical_type.kind == K::kString || logical_type.kind == K::kEnum || logical_type.kind == K::kJson ||
         converted_type == ConvertedType::kUtf8 || converted_type == ConvertedType::kEnum ||
         converted_type == ConvertedType::kJson;
}

bool ColumnDescriptor::is_float16() const {
  return type == PhysicalType::kFixedLenByteArray && type_length == 2 &&
         logical_type.kind == LogicalType::Kind::kFloat16;
}

Schema Schema::build(const std::vector<SchemaElement>& elements) {
  if (elements.empty()) throw_decode_error("schema is empty");
  Schema s;
  s.nodes_.resize(elements.size());
  TreeBuilder builder(elements, &s.nodes_);
  size_t end = builder.build(0, -1, 0);
  if (end != elements.size()) {
    throw_decode_error(fmt::format("schema has {} elements but the root's subtree covers {}", elements.size(), end));
  }
  // Leaves in depth-first order are the column chunks' order.
  for (size_t i = 0; i < s.nodes_.size(); ++i) {
    SchemaNode& n = s.nodes_[i];
    if (!n.is_leaf) continue;
    ColumnDescriptor c;
    c.index = static_cast<int>(s.columns_.size());
    c.node = static_cast<int>(i);
    n.leaf_index = c.index;
    c.type = n.type;
    c.type_length = n.type_length;
    c.converted_type = n.converted_type;
    c.logical_type = n.logical_type;
    c.scale = n.scale;
    c.precision = n.precision;
    c.max_def = n.def_level;
    c.max_rep = n.rep_level;
    std::vector<int> chain;  // root's child .. leaf
    for (int k = static_cast<int>(i); k > 0; k = s.nodes_[static_cast<size_t>(k)].parent) chain.push_back(k);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const SchemaNode& a = s.nodes_[static_cast<size_t>(*it)];
      c.path.push_back(a.name);
      if (a.repetition == Repetition::kRepeated) c.repeated_def.push_back(a.def_level);
    }
    c.field_name = c.path.front();
    c.path_string = fmt::format("{}", fmt::join(c.path, "."));
    int16_t prev = 0;
    for (int16_t d : c.repeated_def) {
      c.list_nullable.push_back(d - 1 > prev);
      c.list_keeps_def.push_back(d - 1 > prev + 1);
      prev = d;
    }
    c.leaf_nullable = c.max_def > prev;
    c.leaf_keeps_def = c.max_def > prev + 1;
    s.columns_.push_back(std::move(c));
  }
  return s;
}

std::vector<int> Schema::leaves_of(int node) const {
  std::vector<int> out;
  std::vector<int> stack{node};
  while (!stack.empty()) {
    int k = stack.back();
    stack.pop_back();
    const SchemaNode& n = nodes_[static_cast<size_t>(k)];
    if (n.is_leaf) out.push_back(n.leaf_index);
    for (auto it = n.children.rbegin(); it != n.children.rend(); ++it) stack.push_back(*it);
  }
  return out;
}

FieldKind Schema::field_kind(int node) const {
  const SchemaNode& n = nodes_[static_cast<size_t>(node)];
  if (n.is_leaf) return n.repetition == Repetition::kRepeated ? FieldKind::kList : FieldKind::kPrimitive;
  std::vector<int> leaves = leaves_of(node);
  if (leaves.empty()) return FieldKind::kOther;
  if (is_map_annotated(n) && n.children.size() == 1) {
    const SchemaNode& kv = nodes_[static_cast<size_t>(n.children[0])];
    if (kv.repetition == Repetition::kRepeated && kv.children.size() == 2 && leaves.size() == 2 &&
        columns_[static_cast<size_t>(leaves[0])].max_rep == n.rep_level + 1 &&
        columns_[static_cast<size_t>(leaves[1])].max_rep == n.rep_level + 1) {
      return FieldKind::kMap;
    }
  }
  if (leaves.size() == 1) {
    return columns_[static_cast<size_t>(leaves[0])].max_rep > n.rep_level ? FieldKind::kList : FieldKind::kPrimitive;
  }
  for (int leaf : leaves) {
    if (columns_[static_cast<size_t>(leaf)].max_rep > n.rep_level) return FieldKind::kOther;
  }
  return FieldKind::kStruct;
}

int Schema::find_column(std::string_view path) const {
  for (const auto& c : columns_) {
    if (c.path_string == path) return c.index;
  }
  return -1;
}

int Schema::find_field(std::string_view name) const {
  for (int f : fields()) {
    if (nodes_[static_cast<size_t>(f)].name == name) return f;
  }
  return -1;
}

std::string Schema::to_string() const {
  std::string out;
  std::vector<std::pair<int, int>> stack{{0, 0}};  // (node, depth)
  while (!stack.empty()) {
    auto [k, depth] = stack.back();
    stack.pop_back();
    const SchemaNode& n = nodes_[static_cast<size_t>(k)];
    std::string line(static_cast<size_t>(depth) * 2, ' ');
    if (k == 0) {
      line += "message " + n.name;
    } else {
      std::string rep = parquet::to_string(n.repetition);
      for (auto& ch : rep) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      line += rep + " ";
      if (n.is_leaf) {
        std::string type = parquet::to_string(n.type);
        for (auto& ch : type) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        line += type;
        if (n.type == PhysicalType::kFixedLenByteArray) line += fmt::format("({})", n.type_length);
      } else {
        line += "group";
      }
      line += " " + n.name;
      if (n.logical_type.kind != LogicalType::Kind::kNone) {
        line += " (" + parquet::to_string(n.logical_type) + ")";
      } else if (n.converted_type != ConvertedType::kNone) {
        line += std::string(" (") + parquet::to_string(n.converted_type) + ")";
      }
    }
    out += line + "\n";
    for (auto it = n.children.rbegin(); it != n.children.rend(); ++it) stack.push_back({*it, depth + 1});
  }
  return out;
}

}  // namespace tzrec::parquet
