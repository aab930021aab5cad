#include "arrow/batch.h"

#include <fmt/format.h>

#include "base/error.h"
#include "parquet/column_slice.h"
#include "parquet/metadata.h"

namespace tzrec::arrow {
namespace {

using parquet::ColumnDescriptor;
using parquet::ConvertedType;
using parquet::LogicalType;
using parquet::PhysicalType;
using parquet::Repetition;
using parquet::SchemaElement;

SchemaElement group(const std::string& name, Repetition repetition, int32_t children) {
  SchemaElement e;
  e.name = name;
  e.repetition = repetition;
  e.num_children = children;
  return e;
}

LogicalType integer(int8_t bits, bool is_signed) {
  LogicalType t;
  t.kind = LogicalType::Kind::kInteger;
  t.bit_width = bits;
  t.is_signed = is_signed;
  return t;
}

SchemaElement leaf(const std::string& name, const ArrowType& type, Repetition repetition) {
  SchemaElement e;
  e.name = name;
  e.repetition = repetition;
  auto annotate = [&](ConvertedType converted, int8_t bits, bool is_signed) {
    e.converted_type = converted;
    e.logical_type = integer(bits, is_signed);
  };
  switch (type.id) {
    case TypeId::kBool: e.type = PhysicalType::kBoolean; break;
    case TypeId::kInt8:
      e.type = PhysicalType::kInt32;
      annotate(ConvertedType::kInt8, 8, true);
      break;
    case TypeId::kInt16:
      e.type = PhysicalType::kInt32;
      annotate(ConvertedType::kInt16, 16, true);
      break;
    case TypeId::kUInt8:
      e.type = PhysicalType::kInt32;
      annotate(ConvertedType::kUint8, 8, false);
      break;
    case TypeId::kUInt16:
      e.type = PhysicalType::kInt32;
      annotate(ConvertedType::kUint16, 16, false);
      break;
    case TypeId::kInt32: e.type = PhysicalType::kInt32; break;
    case TypeId::kInt64:
    case TypeId::kUInt32: e.type = PhysicalType::kInt64; break;
    case TypeId::kUInt64:
      e.type = PhysicalType::kInt64;
      annotate(ConvertedType::kUint64, 64, false);
      break;
    case TypeId::kFloat16:
    case TypeId::kFloat32: e.type = PhysicalType::kFloat; break;
    case TypeId::kFloat64: e.type = PhysicalType::kDouble; break;
    case TypeId::kUtf8:
    case TypeId::kLargeUtf8:
      e.type = PhysicalType::kByteArray;
      e.converted_type = ConvertedType::kUtf8;
      e.logical_type.kind = LogicalType::Kind::kString;
      break;
    case TypeId::kBinary:
    case TypeId::kLargeBinary: e.type = PhysicalType::kByteArray; break;
    default: throw NotSupportedError(fmt::format("Arrow type {} as a leaf", type.to_string()));
  }
  return e;
}

Repetition repetition_of(bool nullable) {
  return nullable ? Repetition::kOptional : Repetition::kRequired;
}

// Appends the schema elements of a field (already checked to be supported).
void add_elements(const std::string& name, const ArrowType& type, bool nullable,
                  std::vector<SchemaElement>* out) {
  if (type.is_list()) {
    SchemaElement g = group(name, repetition_of(nullable), 1);
    g.converted_type = ConvertedType::kList;
    g.logical_type.kind = LogicalType::Kind::kList;
    out->push_back(g);
    out->push_back(group("list", Repetition::kRepeated, 1));
    add_elements("element", type.element().type, type.element().nullable, out);
    return;
  }
  if (type.id == TypeId::kMap) {
    SchemaElement g = group(name, repetition_of(nullable), 1);
    g.converted_type = ConvertedType::kMap;
    g.logical_type.kind = LogicalType::Kind::kMap;
    out->push_back(g);
    out->push_back(group("key_value", Repetition::kRepeated, 2));
    out->push_back(leaf("key", type.key().type, Repetition::kRequired));
    out->push_back(leaf("value", type.value().type, repetition_of(type.value().nullable)));
    return;
  }
  out->push_back(leaf(name, type, repetition_of(nullable)));
}

ArrowType leaf_type(const ColumnDescriptor& d, const std::string& name) {
  const bool int_annotated = d.logical_type.kind == LogicalType::Kind::kInteger;
  const int bits = int_annotated ? d.logical_type.bit_width : 0;
  const bool is_unsigned = int_annotated && !d.logical_type.is_signed;
  auto converted = [&](ConvertedType c) { return d.converted_type == c; };
  switch (d.type) {
    case PhysicalType::kBoolean: return ArrowType(TypeId::kBool);
    case PhysicalType::kInt32:
      if ((bits == 8 && !is_unsigned) || converted(ConvertedType::kInt8)) {
        return ArrowType(TypeId::kInt8);
      }
      if ((bits == 16 && !is_unsigned) || converted(ConvertedType::kInt16)) {
        return ArrowType(TypeId::kInt16);
      }
      if ((bits == 8 && is_unsigned) || converted(ConvertedType::kUint8)) {
        return ArrowType(TypeId::kUInt8);
      }
      if ((bits == 16 && is_unsigned) || converted(ConvertedType::kUint16)) {
        return ArrowType(TypeId::kUInt16);
      }
      if ((bits == 32 && is_unsigned) || converted(ConvertedType::kUint32)) {
        return ArrowType(TypeId::kUInt32);
      }
      return ArrowType(TypeId::kInt32);
    case PhysicalType::kInt64:
      if ((bits == 64 && is_unsigned) || converted(ConvertedType::kUint64)) {
        return ArrowType(TypeId::kUInt64);
      }
      return ArrowType(TypeId::kInt64);
    case PhysicalType::kFloat: return ArrowType(TypeId::kFloat32);
    case PhysicalType::kDouble: return ArrowType(TypeId::kFloat64);
    case PhysicalType::kByteArray:
      return ArrowType(d.is_string() ? TypeId::kUtf8 : TypeId::kBinary);
    default:
      throw DataError(
          fmt::format("column '{}' holds Parquet {} values, which have no Arrow type here", name,
                      parquet::to_string(d.type)));
  }
}

}  // namespace

const ArrowColumn* ArrowBatch::find(std::string_view name) const {
  for (const auto& c : columns) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

parquet::Schema parquet_schema(const ArrowSchema& schema) {
  std::vector<SchemaElement> elements;
  elements.push_back(
      group("schema", Repetition::kRequired, static_cast<int32_t>(schema.fields.size())));
  elements.front().repetition.reset();
  for (const auto& f : schema.fields) {
    check_supported(f, "");
    add_elements(f.name, f.type, f.nullable, &elements);
  }
  return parquet::Schema::build(elements);
}

std::vector<ArrowColumn> empty_columns(const ArrowSchema& schema) {
  const parquet::Schema ps = parquet_schema(schema);
  std::vector<ArrowColumn> out;
  out.reserve(schema.fields.size());
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    const std::vector<int> leaves = ps.leaves_of(ps.fields()[i]);
    ArrowColumn c;
    c.name = schema.fields[i].name;
    c.values = parquet::empty_column(ps.column(leaves.at(0)));
    if (schema.fields[i].type.id == TypeId::kMap) {
      c.map_values = parquet::empty_column(ps.column(leaves.at(1)));
    }
    out.push_back(std::move(c));
  }
  return out;
}

ArrowField field_of(const ArrowColumn& column) {
  const ColumnDescriptor& d = column.values.descriptor;
  const size_t depth = column.values.lists.size();
  if (column.map_values) {
    const ColumnDescriptor& v = column.map_values->descriptor;
    if (depth != 1 || column.map_values->lists.size() != 1 || d.list_nullable.size() != 1) {
      throw DataError(fmt::format(
          "column '{}': a map's keys and values need exactly one list level", column.name));
    }
    return ArrowField(
        column.name,
        ArrowType::map(leaf_type(d, column.name), leaf_type(v, column.name), v.leaf_nullable),
        d.list_nullable[0]);
  }
  if (d.list_nullable.size() != depth) {
    throw DataError(fmt::format("column '{}' has {} list levels but its descriptor describes {}",
                                column.name, depth, d.list_nullable.size()));
  }
  ArrowType t = leaf_type(d, column.name);
  bool element_nullable = d.leaf_nullable;
  for (size_t k = depth; k-- > 0;) {
    t = ArrowType::list(std::move(t), element_nullable);
    element_nullable = d.list_nullable[k];
  }
  return ArrowField(column.name, std::move(t), element_nullable);
}

parquet::Table to_parquet_table(const ArrowBatch& batch) {
  parquet::Table t;
  t.num_rows = batch.num_rows;
  for (const auto& c : batch.columns) {
    t.columns.push_back(c.values);
    if (c.map_values) t.columns.push_back(*c.map_values);
  }
  return t;
}

ArrowBatch slice_batch(const ArrowBatch& batch, int64_t begin, int64_t end) {
  ArrowBatch out;
  out.num_rows = end - begin;
  for (const auto& c : batch.columns) {
    ArrowColumn s;
    s.name = c.name;
    s.values = parquet::slice_rows(c.values, begin, end);
    if (c.map_values) s.map_values = parquet::slice_rows(*c.map_values, begin, end);
    out.columns.push_back(std::move(s));
  }
  return out;
}

ArrowSchema schema_of(const ArrowBatch& batch) {
  ArrowSchema schema;
  for (const auto& c : batch.columns) schema.fields.push_back(field_of(c));
  return schema;
}

ArrowBatch batch_of_table(const parquet::Table& table) {
  ArrowBatch out;
  out.num_rows = table.num_rows;
  for (const auto& leaf : table.columns) {
    const std::string& field = leaf.descriptor.field_name;
    if (!out.columns.empty() && out.columns.back().name == field) {
      // The second leaf of a field: a map's values (after its keys).
      ArrowColumn& c = out.columns.back();
      if (c.map_values || leaf.descriptor.path.size() < 2 ||
          leaf.descriptor.path[leaf.descriptor.path.size() - 2] != "key_value") {
        throw NotSupportedError(fmt::format(
            "Arrow column of the Parquet field '{}' (only scalars, lists and maps have Arrow "
            "columns here; it has leaves {} and more)",
            field, c.values.name()));
      }
      c.map_values = leaf;
      continue;
    }
    ArrowColumn c;
    c.name = field;
    c.values = leaf;
    out.columns.push_back(std::move(c));
  }
  return out;
}

}  // namespace tzrec::arrow
