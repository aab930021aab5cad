#include "data/parquet_files.h"

#include <algorithm>

#include "base/error.h"
#include "parquet/file_reader.h"

namespace tzrec::data {
namespace {

using parquet::ColumnDescriptor;
using parquet::ConvertedType;
using parquet::LogicalType;
using parquet::PhysicalType;
using parquet::Repetition;
using parquet::Schema;
using parquet::SchemaNode;

const char kAccepted[] =
    "ParquetDataset reads int32/int64/float/double/string scalars, lists, lists of lists and maps of those";

bool is_list_annotated(const SchemaNode& n) {
  return n.converted_type == ConvertedType::kList || n.logical_type.kind == LogicalType::Kind::kList;
}

bool is_map_annotated(const SchemaNode& n) {
  return n.converted_type == ConvertedType::kMap || n.converted_type == ConvertedType::kMapKeyValue ||
         n.logical_type.kind == LogicalType::Kind::kMap;
}

// Type name of a leaf and whether ParquetDataset reads it (BOOLEAN is reported as readable; the
// callers accept it only as a scalar).
std::pair<std::string, bool> leaf_type(const SchemaNode& n) {
  if (n.converted_type == ConvertedType::kDecimal || n.logical_type.kind == LogicalType::Kind::kDecimal) {
    const bool logical = n.logical_type.kind == LogicalType::Kind::kDecimal;
    return {fmt::format("decimal({},{})", logical ? n.logical_type.precision : n.precision,
                        logical ? n.logical_type.scale : n.scale),
            false};
  }
  const auto lk = n.logical_type.kind;
  const auto ct = n.converted_type;
  switch (n.type) {
    case PhysicalType::kBoolean:
      return {"bool", true};
    case PhysicalType::kInt32:
      if (lk == LogicalType::Kind::kDate || ct == ConvertedType::kDate) return {"date32", false};
      if (lk == LogicalType::Kind::kTime || ct == ConvertedType::kTimeMillis) return {"time32", false};
      return {"int32", true};
    case PhysicalType::kInt64:
      if (lk == LogicalType::Kind::kTimestamp || ct == ConvertedType::kTimestampMillis ||
          ct == ConvertedType::kTimestampMicros) {
        return {"timestamp", false};
      }
      if (lk == LogicalType::Kind::kTime || ct == ConvertedType::kTimeMicros) return {"time64", false};
      return {"int64", true};
    case PhysicalType::kFloat:
      return {"float", true};
    case PhysicalType::kDouble:
      return {"double", true};
    case PhysicalType::kByteArray: {
      const bool s = ct == ConvertedType::kUtf8 || ct == ConvertedType::kEnum || ct == ConvertedType::kJson ||
                     lk == LogicalType::Kind::kString || lk == LogicalType::Kind::kEnum ||
                     lk == LogicalType::Kind::kJson;
      return {s ? "string" : "binary", true};
    }
    case PhysicalType::kInt96:
      return {"int96 (legacy timestamp)", false};
    case PhysicalType::kFixedLenByteArray:
      if (lk == LogicalType::Kind::kFloat16) return {"float16", false};
      if (lk == LogicalType::Kind::kUuid) return {"uuid", false};
      return {fmt::format("fixed_size_binary({})", n.type_length), false};
  }
  return {"unknown", false};
}

// A readable type of any schema node, for messages: "struct<a: int32>", "list<struct<...>>".
std::string describe_node(const Schema& schema, int index) {
  const auto& nodes = schema.nodes();
  const SchemaNode& n = nodes[static_cast<size_t>(index)];
  auto child = [&](size_t i) { return n.children[i]; };
  std::string t;
  if (n.is_leaf) {
    t = leaf_type(n).first;
  } else if (is_map_annotated(n) && n.children.size() == 1 &&
             nodes[static_cast<size_t>(child(0))].children.size() == 2) {
    const SchemaNode& kv = nodes[static_cast<size_t>(child(0))];
    return "map<" + describe_node(schema, kv.children[0]) + "," + describe_node(schema, kv.children[1]) + ">";
  } else if (is_list_annotated(n) && n.children.size() == 1) {
    const SchemaNode& rep = nodes[static_cast<size_t>(child(0))];
    if (rep.is_leaf || rep.children.size() != 1) return describe_node(schema, child(0));
    return "list<" + describe_node(schema, rep.children[0]) + ">";
  } else {
    t = "struct<";
    for (size_t i = 0; i < n.children.size(); ++i) {
      if (i > 0) t += ", ";
      t += nodes[static_cast<size_t>(child(i))].name + ": " + describe_node(schema, child(i));
    }
    t += ">";
  }
  return n.repetition == Repetition::kRepeated ? "list<" + t + ">" : t;
}

std::string available_columns(const Schema& schema) {
  std::string out;
  for (int f : schema.fields()) {
    if (!out.empty()) out += ", ";
    out += schema.nodes()[static_cast<size_t>(f)].name;
  }
  return out;
}

}  // namespace

ColumnShape column_shape(const Schema& schema, const std::string& name, const std::string& file) {
  const int field = schema.find_field(name);
  if (field < 0) {
    throw DataError(fmt::format(
        "{}: column '{}' is needed (feature input, label or sample weight) but the Parquet file has no such column "
        "(columns: {}); fix the config or the file",
        file, name, available_columns(schema)));
  }
  const auto& nodes = schema.nodes();
  const SchemaNode& f = nodes[static_cast<size_t>(field)];
  auto reject = [&]() -> DataError {
    return DataError(
        fmt::format("column {} of {} has type {}; {}", name, file, describe_node(schema, field), kAccepted));
  };
  ColumnShape shape;
  shape.leaves = schema.leaves_of(field);
  switch (schema.field_kind(field)) {
    case parquet::FieldKind::kPrimitive: {
      if (!f.is_leaf || !leaf_type(f).second) throw reject();
      shape.kind = ColumnShape::Kind::kScalar;
      shape.type_name = leaf_type(f).first;
      return shape;
    }
    case parquet::FieldKind::kList: {
      const ColumnDescriptor& leaf = schema.column(shape.leaves.at(0));
      const SchemaNode& ln = nodes[static_cast<size_t>(leaf.node)];
      if (leaf.max_rep < 1 || leaf.max_rep > 2 || ln.type == PhysicalType::kBoolean || !leaf_type(ln).second) {
        throw reject();
      }
      // Every group on the path is a LIST wrapper (one child) or its repeated level; anything
      // else is a struct element.
      for (int k = ln.parent; k > 0; k = nodes[static_cast<size_t>(k)].parent) {
        const SchemaNode& g = nodes[static_cast<size_t>(k)];
        if (g.children.size() != 1) throw reject();
        if (g.repetition != Repetition::kRepeated && !is_list_annotated(g)) throw reject();
      }
      shape.kind = ColumnShape::Kind::kList;
      shape.list_depth = leaf.max_rep;
      shape.type_name = leaf_type(ln).first;
      for (int d = 0; d < leaf.max_rep; ++d) shape.type_name = "list<" + shape.type_name + ">";
      return shape;
    }
    case parquet::FieldKind::kMap: {
      const ColumnDescriptor& key = schema.column(shape.leaves.at(0));
      const ColumnDescriptor& value = schema.column(shape.leaves.at(1));
      const SchemaNode& kn = nodes[static_cast<size_t>(key.node)];
      const SchemaNode& vn = nodes[static_cast<size_t>(value.node)];
      const auto kt = kn.type, vt = vn.type;
      const bool key_ok = key.path.size() == 3 && leaf_type(kn).second &&
                          (kt == PhysicalType::kByteArray || kt == PhysicalType::kInt64 || kt == PhysicalType::kInt32);
      const bool value_ok = value.path.size() == 3 && leaf_type(vn).second && vt != PhysicalType::kBoolean;
      if (!key_ok || !value_ok || key.max_rep != 1 || value.max_rep != 1) throw reject();
      shape.kind = ColumnShape::Kind::kMap;
      shape.list_depth = 1;
      shape.type_name = "map<" + leaf_type(kn).first + "," + leaf_type(vn).first + ">";
      return shape;
    }
    default:
      throw reject();
  }
}

std::shared_ptr<ParquetFiles> ParquetFiles::open(std::vector<std::string> paths) {
  auto files = std::shared_ptr<ParquetFiles>(new ParquetFiles());
  for (const auto& path : paths) {
    auto reader = parquet::FileReader::open(path);
    files->file_rows_.push_back(reader->num_rows());
    files->offsets_.push_back(files->offsets_.back() + reader->num_rows());
    files->schemas_.push_back(reader->schema());
  }
  files->paths_ = std::move(paths);
  return files;
}

std::vector<FilePiece> ParquetFiles::pieces(const RowRange& range) const {
  if (range.begin < 0 || range.begin > range.end || range.end > total_rows()) {
    throw UsageError(fmt::format("row range [{}, {}) is not inside the {} rows of the input files", range.begin,
                                 range.end, total_rows()));
  }
  std::vector<FilePiece> out;
  if (range.begin == range.end) return out;
  // First file whose rows end after range.begin.
  auto it = std::upper_bound(offsets_.begin(), offsets_.end(), range.begin);
  for (auto f = static_cast<int32_t>(it - offsets_.begin()) - 1; f < num_files(); ++f) {
    const int64_t fb = file_offset(f), fe = file_offset(f + 1);
    if (fb >= range.end) break;
    const int64_t b = std::max(fb, range.begin), e = std::min(fe, range.end);
    if (b < e) out.push_back(FilePiece{f, b - fb, e - fb});
  }
  return out;
}

std::vector<FilePiece> ParquetFiles::pieces(const std::vector<RowRange>& ranges) const {
  std::vector<FilePiece> out;
  for (const auto& r : ranges) {
    for (const auto& p : pieces(r)) out.push_back(p);
  }
  return out;
}

void ParquetFiles::check_columns(const std::vector<std::string>& names) const {
  for (const auto& name : names) {
    std::string first_type;
    int32_t first_file = -1;
    for (int32_t f = 0; f < num_files(); ++f) {
      const ColumnShape shape = column_shape(schema(f), name, path(f));
      // Strings and binaries concatenate; other differences do not.
      std::string key = shape.type_name;
      for (size_t p = key.find("binary"); p != std::string::npos; p = key.find("binary")) key.replace(p, 6, "string");
      if (first_file < 0) {
        first_type = key;
        first_file = f;
      } else if (key != first_type) {
        throw DataError(fmt::format(
            "column {} has type {} in {} but {} in {}; all input files must give a column the same type", name,
            column_shape(schema(first_file), name, path(first_file)).type_name, path(first_file), shape.type_name,
            path(f)));
      }
    }
  }
}

}  // namespace tzrec::data
