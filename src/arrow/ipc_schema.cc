#include "arrow/ipc_schema.h"

#include <cctype>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "arrow/flatbuffer.h"
#include "arrow/format.h"
#include "base/error.h"

namespace tzrec::arrow {
namespace {

namespace field = format::field;
namespace schema_ids = format::schema;

constexpr int kMaxSchemaDepth = 64;

const char* unit_name(int16_t unit) {
  switch (unit) {
    case 0: return "s";
    case 1: return "ms";
    case 2: return "us";
    case 3: return "ns";
    default: return "?";
  }
}

std::string int_name(int32_t bits, bool is_signed) {
  return fmt::format("{}int{}", is_signed ? "" : "u", bits);
}

TypeId int_type(int32_t bits, bool is_signed) {
  switch (bits) {
    case 8: return is_signed ? TypeId::kInt8 : TypeId::kUInt8;
    case 16: return is_signed ? TypeId::kInt16 : TypeId::kUInt16;
    case 32: return is_signed ? TypeId::kInt32 : TypeId::kUInt32;
    case 64: return is_signed ? TypeId::kInt64 : TypeId::kUInt64;
    default: throw FormatError(fmt::format("integer type of invalid bit width {}", bits));
  }
}

std::string children_string(const std::vector<ArrowField>& children) {
  std::string out;
  for (size_t i = 0; i < children.size(); ++i) {
    if (i > 0) out += ", ";
    out += children[i].name + ": " + children[i].type.to_string();
  }
  return out;
}

bool is_primitive(TypeId id) { return id >= TypeId::kBool && id <= TypeId::kLargeBinary; }

class SchemaDecoder {
 public:
  ArrowField field(const FbTable& f, int depth) {
    if (depth > kMaxSchemaDepth) {
      throw FormatError(fmt::format("schema nested deeper than {} levels", kMaxSchemaDepth));
    }
    ArrowField out;
    out.name = std::string(f.string(field::kName).value_or(""));
    out.nullable = f.boolean(field::kNullable, false);
    const FbVector kids = f.vector(field::kChildren, 4);
    std::vector<ArrowField> children;
    children.reserve(kids.size());
    for (size_t i = 0; i < kids.size(); ++i) children.push_back(field(kids.table(i), depth + 1));
    out.type = type(f, std::move(children), out.name);
    if (auto dict = f.table(field::kDictionary)) {
      ArrowType d(TypeId::kDictionary);
      d.detail = "int32";
      if (auto index = dict->table(1)) {
        d.detail = int_name(index->scalar<int32_t>(0, 0), index->boolean(1, false));
      }
      d.children.emplace_back("values", std::move(out.type), true);
      out.type = std::move(d);
    }
    return out;
  }

 private:
  ArrowType type(const FbTable& f, std::vector<ArrowField> children, const std::string& name) {
    const uint8_t tag = f.scalar<uint8_t>(field::kTypeType, 0);
    const std::optional<FbTable> t = f.table(field::kType);
    ArrowType out;
    out.children = std::move(children);
    auto need_children = [&](size_t n, const char* what) {
      if (out.children.size() != n) {
        throw FormatError(fmt::format("{} field '{}' has {} children, expected {}", what, name,
                                      out.children.size(), n));
      }
    };
    auto params = [&]() -> const FbTable& {
      if (!t) {
        throw FormatError(
            fmt::format("field '{}' lacks the parameters of its type (union tag {})", name, tag));
      }
      return *t;
    };
    switch (tag) {
      case format::Type::kNull: out.id = TypeId::kNull; break;
      case format::Type::kInt: {
        const int32_t bits = params().scalar<int32_t>(0, 0);
        out.id = int_type(bits, params().boolean(1, false));
        break;
      }
      case format::Type::kFloatingPoint:
        switch (params().scalar<int16_t>(0, 0)) {
          case 0: out.id = TypeId::kFloat16; break;
          case 1: out.id = TypeId::kFloat32; break;
          case 2: out.id = TypeId::kFloat64; break;
          default:
            throw FormatError(fmt::format("field '{}': floating point of unknown precision {}",
                                          name, params().scalar<int16_t>(0, 0)));
        }
        break;
      case format::Type::kBinary: out.id = TypeId::kBinary; break;
      case format::Type::kUtf8: out.id = TypeId::kUtf8; break;
      case format::Type::kBool: out.id = TypeId::kBool; break;
      case format::Type::kLargeBinary: out.id = TypeId::kLargeBinary; break;
      case format::Type::kLargeUtf8: out.id = TypeId::kLargeUtf8; break;
      case format::Type::kList:
        need_children(1, "list");
        out.id = TypeId::kList;
        break;
      case format::Type::kLargeList:
        need_children(1, "large_list");
        out.id = TypeId::kLargeList;
        break;
      case format::Type::kMap: {
        need_children(1, "map");
        const ArrowType& entries = out.children[0].type;
        if (entries.id != TypeId::kStruct || entries.children.size() != 2) {
          throw FormatError(
              fmt::format("map field '{}' has entries of type {}, expected a struct of a key and a "
                          "value",
                          name, entries.to_string()));
        }
        out.id = TypeId::kMap;
        out.keys_sorted = t ? t->boolean(0, false) : false;
        break;
      }
      case format::Type::kStruct: out.id = TypeId::kStruct; break;
      case format::Type::kDecimal: {
        out.id = TypeId::kDecimal;
        const int32_t bits = params().scalar<int32_t>(2, 128);
        out.detail = fmt::format("decimal{}({}, {})", bits, params().scalar<int32_t>(0, 0),
                                 params().scalar<int32_t>(1, 0));
        break;
      }
      case format::Type::kDate:
        out.id = TypeId::kDate;
        out.detail = (t ? t->scalar<int16_t>(0, 1) : 1) == 0 ? "date32[day]" : "date64[ms]";
        break;
      case format::Type::kTime: {
        out.id = TypeId::kTime;
        const int32_t bits = t ? t->scalar<int32_t>(1, 32) : 32;
        out.detail = fmt::format("time{}[{}]", bits, unit_name(t ? t->scalar<int16_t>(0, 1) : 1));
        break;
      }
      case format::Type::kTimestamp: {
        out.id = TypeId::kTimestamp;
        const std::string unit = unit_name(t ? t->scalar<int16_t>(0, 0) : 0);
        const std::string_view tz = t ? t->string(1).value_or("") : "";
        out.detail = tz.empty() ? fmt::format("timestamp[{}]", unit)
                                : fmt::format("timestamp[{}, tz={}]", unit, tz);
        break;
      }
      case format::Type::kInterval: {
        out.id = TypeId::kInterval;
        const int16_t unit = t ? t->scalar<int16_t>(0, 0) : 0;
        out.detail = unit == 0   ? "month_interval"
                     : unit == 1 ? "day_time_interval"
                                 : "month_day_nano_interval";
        break;
      }
      case format::Type::kDuration:
        out.id = TypeId::kDuration;
        out.detail = fmt::format("duration[{}]", unit_name(t ? t->scalar<int16_t>(0, 1) : 1));
        break;
      case format::Type::kFixedSizeBinary:
        out.id = TypeId::kFixedSizeBinary;
        out.detail = fmt::format("fixed_size_binary[{}]", t ? t->scalar<int32_t>(0, 0) : 0);
        break;
      case format::Type::kFixedSizeList:
        need_children(1, "fixed_size_list");
        out.id = TypeId::kFixedSizeList;
        out.detail = fmt::format("fixed_size_list<{}>[{}]", out.children[0].type.to_string(),
                                 t ? t->scalar<int32_t>(0, 0) : 0);
        break;
      case format::Type::kUnion:
        out.id =
            (t ? t->scalar<int16_t>(0, 0) : 0) == 1 ? TypeId::kDenseUnion : TypeId::kSparseUnion;
        break;
      case format::Type::kRunEndEncoded:
        need_children(2, "run_end_encoded");
        out.id = TypeId::kRunEndEncoded;
        break;
      case format::Type::kBinaryView: out.id = TypeId::kBinaryView; break;
      case format::Type::kUtf8View: out.id = TypeId::kUtf8View; break;
      case format::Type::kListView:
        need_children(1, "list_view");
        out.id = TypeId::kListView;
        break;
      case format::Type::kLargeListView:
        need_children(1, "large_list_view");
        out.id = TypeId::kLargeListView;
        break;
      default:
        out.id = TypeId::kUnknown;
        out.detail = fmt::format("type id {}", tag);
        break;
    }
    return out;
  }
};

// The union tag and parameters table of a type the writer writes.
std::pair<uint8_t, FbBuilder> type_to_flatbuffer(const ArrowType& t) {
  FbBuilder params;
  auto int_params = [&](int32_t bits, bool is_signed) {
    params.add_scalar<int32_t>(0, bits).add_bool(1, is_signed);
    return std::make_pair(uint8_t{format::kInt}, params);
  };
  auto float_params = [&](int16_t precision) {
    params.add_scalar<int16_t>(0, precision);
    return std::make_pair(uint8_t{format::kFloatingPoint}, params);
  };
  switch (t.id) {
    case TypeId::kBool: return {format::Type::kBool, params};
    case TypeId::kInt8: return int_params(8, true);
    case TypeId::kInt16: return int_params(16, true);
    case TypeId::kInt32: return int_params(32, true);
    case TypeId::kInt64: return int_params(64, true);
    case TypeId::kUInt8: return int_params(8, false);
    case TypeId::kUInt16: return int_params(16, false);
    case TypeId::kUInt32: return int_params(32, false);
    case TypeId::kUInt64: return int_params(64, false);
    case TypeId::kFloat16: return float_params(0);
    case TypeId::kFloat32: return float_params(1);
    case TypeId::kFloat64: return float_params(2);
    case TypeId::kUtf8: return {format::Type::kUtf8, params};
    case TypeId::kLargeUtf8: return {format::Type::kLargeUtf8, params};
    case TypeId::kBinary: return {format::Type::kBinary, params};
    case TypeId::kLargeBinary: return {format::Type::kLargeBinary, params};
    case TypeId::kList: return {format::Type::kList, params};
    case TypeId::kLargeList: return {format::Type::kLargeList, params};
    case TypeId::kMap: params.add_bool(0, t.keys_sorted); return {format::Type::kMap, params};
    case TypeId::kStruct: return {format::Type::kStruct, params};
    default: throw NotSupportedError(fmt::format("writing Arrow type {}", t.to_string()));
  }
}

FbBuilder field_to_flatbuffer(const ArrowField& f) {
  auto [tag, params] = type_to_flatbuffer(f.type);
  std::vector<FbBuilder> children;
  for (const auto& c : f.type.children) children.push_back(field_to_flatbuffer(c));
  FbBuilder out;
  out.add_string(field::kName, f.name)
      .add_bool(field::kNullable, f.nullable)
      .add_scalar<uint8_t>(field::kTypeType, tag)
      .add_table(field::kType, std::move(params))
      .add_tables(field::kChildren, std::move(children));
  return out;
}

std::string normalize_field_type(std::string_view s) {
  std::string up;
  for (char c : s) {
    if (!std::isspace(static_cast<unsigned char>(c))) {
      up.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    }
  }
  // Whole words BIGINT -> INT64 and INT -> INT32 (words: runs of letters, digits and '_').
  std::string out;
  size_t i = 0;
  while (i < up.size()) {
    auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    if (!word_char(up[i])) {
      out.push_back(up[i++]);
      continue;
    }
    size_t j = i;
    while (j < up.size() && word_char(up[j])) ++j;
    std::string word = up.substr(i, j - i);
    out += word == "BIGINT" ? "INT64" : word == "INT" ? "INT32" : word;
    i = j;
  }
  return out;
}

// Every FieldType of data.proto by its enum name and its input_fields_str spelling.
const std::map<std::string, ArrowType>& field_types() {
  static const std::map<std::string, ArrowType> types = [] {
    std::map<std::string, ArrowType> m;
    const std::pair<const char*, TypeId> scalars[] = {{"INT32", TypeId::kInt32},
                                                      {"INT64", TypeId::kInt64},
                                                      {"STRING", TypeId::kUtf8},
                                                      {"FLOAT", TypeId::kFloat32},
                                                      {"DOUBLE", TypeId::kFloat64}};
    for (const auto& [name, id] : scalars) {
      const std::string n(name);
      m[n] = ArrowType(id);
      m["ARRAY_" + n] = m["ARRAY<" + n + ">"] = ArrowType::list(ArrowType(id));
      m["ARRAY_ARRAY_" + n] = m["ARRAY<ARRAY<" + n + ">>"] =
          ArrowType::list(ArrowType::list(ArrowType(id)));
    }
    for (const auto& [key, key_id] :
         {std::make_pair("STRING", TypeId::kUtf8), std::make_pair("INT64", TypeId::kInt64),
          std::make_pair("INT32", TypeId::kInt32)}) {
      for (const auto& [value, value_id] : scalars) {
        const ArrowType t = ArrowType::map(ArrowType(key_id), ArrowType(value_id));
        m[fmt::format("MAP_{}_{}", key, value)] = t;
        m[fmt::format("MAP<{},{}>", key, value)] = t;
      }
    }
    return m;
  }();
  return types;
}

}  // namespace

// ---- ArrowType ----------------------------------------------------------------------------------

ArrowType ArrowType::list(ArrowType element, bool element_nullable, bool large) {
  ArrowType t(large ? TypeId::kLargeList : TypeId::kList);
  t.children.emplace_back("item", std::move(element), element_nullable);
  return t;
}

ArrowType ArrowType::map(ArrowType key, ArrowType value, bool value_nullable) {
  ArrowType entries(TypeId::kStruct);
  entries.children.emplace_back("key", std::move(key), false);
  entries.children.emplace_back("value", std::move(value), value_nullable);
  ArrowType t(TypeId::kMap);
  t.children.emplace_back("entries", std::move(entries), false);
  return t;
}

const ArrowField& ArrowType::element() const { return children.at(0); }
const ArrowField& ArrowType::key() const { return children.at(0).type.children.at(0); }
const ArrowField& ArrowType::value() const { return children.at(0).type.children.at(1); }

std::string ArrowType::to_string() const {
  switch (id) {
    case TypeId::kBool: return "bool";
    case TypeId::kInt8: return "int8";
    case TypeId::kInt16: return "int16";
    case TypeId::kInt32: return "int32";
    case TypeId::kInt64: return "int64";
    case TypeId::kUInt8: return "uint8";
    case TypeId::kUInt16: return "uint16";
    case TypeId::kUInt32: return "uint32";
    case TypeId::kUInt64: return "uint64";
    case TypeId::kFloat16: return "float16";
    case TypeId::kFloat32: return "float";
    case TypeId::kFloat64: return "double";
    case TypeId::kUtf8: return "string";
    case TypeId::kLargeUtf8: return "large_string";
    case TypeId::kBinary: return "binary";
    case TypeId::kLargeBinary: return "large_binary";
    case TypeId::kList: return "list<" + element().type.to_string() + ">";
    case TypeId::kLargeList: return "large_list<" + element().type.to_string() + ">";
    case TypeId::kMap:
      return "map<" + key().type.to_string() + ", " + value().type.to_string() + ">";
    case TypeId::kNull: return "null";
    case TypeId::kStruct: return "struct<" + children_string(children) + ">";
    case TypeId::kSparseUnion: return "sparse_union<" + children_string(children) + ">";
    case TypeId::kDenseUnion: return "dense_union<" + children_string(children) + ">";
    case TypeId::kRunEndEncoded:
      return "run_end_encoded<" + children.at(0).type.to_string() + ", " +
             children.at(1).type.to_string() + ">";
    case TypeId::kUtf8View: return "string_view";
    case TypeId::kBinaryView: return "binary_view";
    case TypeId::kListView: return "list_view<" + children.at(0).type.to_string() + ">";
    case TypeId::kLargeListView: return "large_list_view<" + children.at(0).type.to_string() + ">";
    case TypeId::kDictionary:
      return "dictionary<values=" + children.at(0).type.to_string() + ", indices=" + detail + ">";
    case TypeId::kUnknown: return "<unknown " + detail + ">";
    default: return detail;
  }
}

// ---- ArrowSchema --------------------------------------------------------------------------------

int ArrowSchema::find(std::string_view name) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::vector<std::string> ArrowSchema::missing(const std::vector<std::string>& wanted) const {
  std::vector<std::string> out;
  for (const auto& name : wanted) {
    if (find(name) < 0) out.push_back(name);
  }
  return out;
}

std::vector<std::string> ArrowSchema::names() const {
  std::vector<std::string> out;
  out.reserve(fields.size());
  for (const auto& f : fields) out.push_back(f.name);
  return out;
}

std::string ArrowSchema::to_string() const {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ", ";
    out += fields[i].name + ": " + fields[i].type.to_string() +
           (fields[i].nullable ? "" : " not null");
  }
  return out;
}

bool same_type(const ArrowType& a, const ArrowType& b) {
  if (a.id != b.id || a.detail != b.detail || a.children.size() != b.children.size()) return false;
  if (a.id == TypeId::kMap) {
    return same_type(a.key().type, b.key().type) && same_type(a.value().type, b.value().type);
  }
  // Struct and union members are matched by name too; list elements are not.
  const bool named =
      a.id == TypeId::kStruct || a.id == TypeId::kSparseUnion || a.id == TypeId::kDenseUnion;
  for (size_t i = 0; i < a.children.size(); ++i) {
    if (named && a.children[i].name != b.children[i].name) return false;
    if (!same_type(a.children[i].type, b.children[i].type)) return false;
  }
  return true;
}

SchemaDiff compare_schemas(const ArrowSchema& expected, const ArrowSchema& actual) {
  SchemaDiff d;
  int last = -1;
  for (const auto& f : expected.fields) {
    const int i = actual.find(f.name);
    if (i < 0) {
      d.missing.push_back(f.name);
      continue;
    }
    const ArrowField& a = actual.fields[static_cast<size_t>(i)];
    if (!same_type(f.type, a.type)) {
      d.retyped.push_back(
          fmt::format("{}: {} -> {}", f.name, f.type.to_string(), a.type.to_string()));
    }
    if (i < last) d.reordered = true;
    last = std::max(last, i);
  }
  for (const auto& a : actual.fields) {
    if (expected.find(a.name) < 0) d.added.push_back(a.name);
  }
  return d;
}

std::string SchemaDiff::to_string() const {
  std::string out;
  if (!missing.empty()) out += fmt::format("missing column(s) [{}]", fmt::join(missing, ", "));
  if (!retyped.empty()) {
    if (!out.empty()) out += "; ";
    out += fmt::format("changed column type(s) [{}]", fmt::join(retyped, ", "));
  }
  return out;
}

// ---- input_fields ------------------------------------------------------------------------------

ArrowType type_of_field_type(std::string_view field_type) {
  const auto& types = field_types();
  auto it = types.find(normalize_field_type(field_type));
  if (it == types.end()) {
    std::vector<std::string> names;
    for (const auto& [name, t] : types) {
      if (name.find('<') == std::string::npos) names.push_back(name);
    }
    throw ConfigError(
        fmt::format("unknown input field type '{}' (known: {}, or their ARRAY<...> / MAP<K,V> "
                    "spellings)",
                    field_type, fmt::join(names, ", ")));
  }
  return it->second;
}

ArrowSchema schema_from_input_fields(
    const std::vector<std::pair<std::string, std::string>>& fields) {
  ArrowSchema s;
  for (const auto& [name, type] : fields) {
    try {
      s.fields.emplace_back(name, type_of_field_type(type), true);
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("input_fields: field '{}': {}", name, e.what()));
    }
  }
  return s;
}

// ---- support -----------------------------------------------------------------------------------

bool is_supported(const ArrowField& field) {
  const ArrowType& t = field.type;
  if (is_primitive(t.id)) return true;
  if (t.id == TypeId::kMap) return is_primitive(t.key().type.id) && is_primitive(t.value().type.id);
  const ArrowType* e = &t;
  while (e->is_list()) e = &e->element().type;
  return e != &t && is_primitive(e->id);
}

void check_supported(const ArrowField& field, const std::string& context) {
  if (is_supported(field)) return;
  throw NotSupportedError(fmt::format("Arrow type {} of column '{}'{}", field.type.to_string(),
                                      field.name, context.empty() ? "" : " (" + context + ")"));
}

// ---- flatbuffers -------------------------------------------------------------------------------

ArrowSchema schema_from_flatbuffer(const FbTable& schema_table) {
  ArrowSchema out;
  out.big_endian = schema_table.scalar<int16_t>(schema_ids::kEndianness, 0) == 1;
  const FbVector fields = schema_table.vector(schema_ids::kFields, 4);
  SchemaDecoder decoder;
  out.fields.reserve(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    out.fields.push_back(decoder.field(fields.table(i), 1));
  }
  return out;
}

FbBuilder schema_to_flatbuffer(const ArrowSchema& schema) {
  std::vector<FbBuilder> fields;
  for (const auto& f : schema.fields) {
    if (!is_supported(f)) check_supported(f, "");
    fields.push_back(field_to_flatbuffer(f));
  }
  FbBuilder out;
  out.add_scalar<int16_t>(schema_ids::kEndianness, 0)
      .add_tables(schema_ids::kFields, std::move(fields));
  return out;
}

}  // namespace tzrec::arrow
