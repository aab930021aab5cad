// The schema of Arrow data: fields with a name, a type tree and nullability, as a Schema message
// of the Arrow IPC format carries them (format/Schema.fbs), or as TorchEasyRec's input_fields
// describe them (FIELD_TYPE_TO_PA in tzrec/datasets/utils.py).
//
// Every Arrow type is represented, so that a schema can be decoded, printed and compared in full;
// only some can be decoded into columns (see batch.h): the others make the reader throw
// NotSupportedError when a column of that type is read.
//
// Type names (to_string) follow pyarrow's where they are short: int8 ... uint64, float16, float
// (float32), double (float64), bool, string, large_string, binary, large_binary, list<T>,
// large_list<T>, map<K, V>, struct<a: T, ...>, dictionary<values=T, indices=I>, timestamp[ms],
// decimal128(10, 2), ... List element and map entry names are not shown.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tzrec::arrow {

class FbBuilder;
class FbTable;

enum class TypeId : int8_t {
  // Types the reader decodes (some widened, see batch.h).
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat16,
  kFloat32,
  kFloat64,
  kUtf8,
  kLargeUtf8,
  kBinary,
  kLargeBinary,
  kList,
  kLargeList,
  kMap,
  // Types it refuses (NotSupportedError) but can skip when the column is not read.
  kNull,
  kStruct,
  kDecimal,
  kDate,
  kTime,
  kTimestamp,
  kInterval,
  kDuration,
  kFixedSizeBinary,
  kFixedSizeList,
  kSparseUnion,
  kDenseUnion,
  kRunEndEncoded,
  kUtf8View,
  kBinaryView,
  kListView,
  kLargeListView,
  kDictionary,  // a dictionary-encoded field: children[0] holds the dictionary's value type
  kUnknown,     // a type id this reader does not know (cannot even be skipped)
};

struct ArrowField;

struct ArrowType {
  TypeId id = TypeId::kNull;
  // list / large_list / list views / fixed_size_list: {element}; map: {entries} where entries is
  // a non-nullable struct<key, value>; struct / unions: the members; run_end_encoded: {run_ends,
  // values}; dictionary: {values}.
  std::vector<ArrowField> children;
  // The full name of a parameterized type that the reader does not decode ("timestamp[ms,
  // tz=UTC]", "decimal128(10, 2)", "fixed_size_binary[16]"); the index type of a dictionary
  // ("int32"); "type id N" for kUnknown.
  std::string detail;
  bool keys_sorted = false;  // map

  ArrowType() = default;
  explicit ArrowType(TypeId type_id) : id(type_id) {}
  // list<element> (large_list when `large`), element named "item" as pyarrow names it.
  static ArrowType list(ArrowType element, bool element_nullable = true, bool large = false);
  // map<key, value>: entries "entries", key "key" (never nullable), value "value".
  static ArrowType map(ArrowType key, ArrowType value, bool value_nullable = true);

  bool is_list() const { return id == TypeId::kList || id == TypeId::kLargeList; }
  // The element field of a list type, the key / value fields of a map type.
  const ArrowField& element() const;
  const ArrowField& key() const;
  const ArrowField& value() const;

  std::string to_string() const;
};

struct ArrowField {
  std::string name;
  ArrowType type;
  bool nullable = true;

  ArrowField() = default;
  ArrowField(std::string field_name, ArrowType field_type, bool is_nullable = true)
      : name(std::move(field_name)), type(std::move(field_type)), nullable(is_nullable) {}
};

struct ArrowSchema {
  std::vector<ArrowField> fields;
  bool big_endian = false;  // the Schema message's endianness (the reader refuses big-endian)

  // Index of the first field named `name`; -1 when absent.
  int find(std::string_view name) const;
  // The names among `names` that no field has, in their order.
  std::vector<std::string> missing(const std::vector<std::string>& names) const;
  std::vector<std::string> names() const;
  // "a: int64, tags: list<string>, m: map<string, float> not null"
  std::string to_string() const;
};

// Equality of types as TorchEasyRec compares a message's schema with the reader's (after its
// remove_nullable): nullability and the names of list elements and map entries do not count;
// everything else does (list and large_list differ, int32 and int64 differ).
bool same_type(const ArrowType& a, const ArrowType& b);

// How a message's schema (`actual`) differs from the schema a reader expects.
struct SchemaDiff {
  std::vector<std::string> added;    // columns of `actual` that `expected` lacks
  std::vector<std::string> missing;  // columns of `expected` that `actual` lacks
  std::vector<std::string> retyped;  // "name: <expected type> -> <actual type>"
  bool reordered = false;            // the shared columns come in another order

  // Every expected column is there with its type (added or reordered columns are tolerated).
  bool compatible() const { return missing.empty() && retyped.empty(); }
  bool identical() const { return compatible() && added.empty() && !reordered; }
  // "missing column(s) [a, b]; changed column type(s) [c: int64 -> string]" (the problems only;
  // empty when compatible).
  std::string to_string() const;
};
SchemaDiff compare_schemas(const ArrowSchema& expected, const ArrowSchema& actual);

// The Arrow type of a TorchEasyRec input field type: the FieldType enum names of data.proto
// (INT32, INT64, FLOAT, DOUBLE, STRING, ARRAY_INT64, ARRAY_ARRAY_FLOAT, MAP_STRING_INT64, ...)
// or the input_fields_str spellings (BIGINT, INT, ARRAY<INT64>, MAP<STRING,FLOAT>, any case and
// spacing), mapped as FIELD_TYPE_TO_PA maps them (lists of nullable elements, maps of non-null
// keys and nullable values). Throws ConfigError for other names.
ArrowType type_of_field_type(std::string_view field_type);
// A schema of nullable fields from (input_name, input_type) pairs, as KafkaDataset builds it from
// data_config.input_fields. Throws ConfigError naming the field for an unknown type.
ArrowSchema schema_from_input_fields(
    const std::vector<std::pair<std::string, std::string>>& fields);

// Whether the reader decodes a column of this field's type (see batch.h for the shapes).
bool is_supported(const ArrowField& field);
// Throws NotSupportedError "not supported yet: Arrow type <type> of column '<name>'" (followed by
// " (<context>)" when context is not empty) unless is_supported(field).
void check_supported(const ArrowField& field, const std::string& context);

// The Schema table of a Schema message. Throws FormatError for malformed metadata (a list
// without its element, a map whose entries are not a struct of two fields, an invalid integer
// width, nesting deeper than 64 levels).
ArrowSchema schema_from_flatbuffer(const FbTable& schema);
// The Schema table of `schema` for a Schema message. Throws NotSupportedError for a type the
// writer does not write (those is_supported refuses).
FbBuilder schema_to_flatbuffer(const ArrowSchema& schema);

}  // namespace tzrec::arrow
