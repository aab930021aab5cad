// Arrow schemas: type names, TorchEasyRec input field types, schema comparison (what a Kafka
// reader tolerates), the Parquet descriptors of Arrow columns, and Schema flatbuffers.
#include <cstdio>

#include <gtest/gtest.h>

#include "arrow/batch.h"
#include "arrow/flatbuffer.h"
#include "arrow/ipc_schema.h"
#include "base/error.h"
#include "parquet/writer.h"

namespace tzrec::arrow {
namespace ipc_schema_test {

using parquet::PhysicalType;

ArrowType t(TypeId id) { return ArrowType(id); }

TEST(IpcSchemaTest, TypeNames) {
  EXPECT_EQ(t(TypeId::kInt64).to_string(), "int64");
  EXPECT_EQ(t(TypeId::kUInt8).to_string(), "uint8");
  EXPECT_EQ(t(TypeId::kFloat32).to_string(), "float");
  EXPECT_EQ(t(TypeId::kFloat64).to_string(), "double");
  EXPECT_EQ(t(TypeId::kFloat16).to_string(), "float16");
  EXPECT_EQ(t(TypeId::kUtf8).to_string(), "string");
  EXPECT_EQ(t(TypeId::kLargeBinary).to_string(), "large_binary");
  EXPECT_EQ(ArrowType::list(t(TypeId::kInt64)).to_string(), "list<int64>");
  EXPECT_EQ(ArrowType::list(ArrowType::list(t(TypeId::kFloat32))).to_string(), "list<list<float>>");
  EXPECT_EQ(ArrowType::list(t(TypeId::kUtf8), true, true).to_string(), "large_list<string>");
  EXPECT_EQ(ArrowType::map(t(TypeId::kUtf8), t(TypeId::kFloat32)).to_string(),
            "map<string, float>");
  ArrowType s(TypeId::kStruct);
  s.children.emplace_back("a", t(TypeId::kInt32));
  s.children.emplace_back("b", ArrowType::list(t(TypeId::kUtf8)));
  EXPECT_EQ(s.to_string(), "struct<a: int32, b: list<string>>");
  ArrowType d(TypeId::kDictionary);
  d.detail = "int32";
  d.children.emplace_back("values", t(TypeId::kUtf8));
  EXPECT_EQ(d.to_string(), "dictionary<values=string, indices=int32>");

  ArrowSchema schema;
  schema.fields.emplace_back("id", t(TypeId::kInt64), false);
  schema.fields.emplace_back("m", ArrowType::map(t(TypeId::kInt64), t(TypeId::kFloat64)));
  EXPECT_EQ(schema.to_string(), "id: int64 not null, m: map<int64, double>");
  EXPECT_EQ(schema.find("m"), 1);
  EXPECT_EQ(schema.find("x"), -1);
}

TEST(IpcSchemaTest, InputFieldTypesMapAsTorchEasyRecDoes) {
  const std::pair<const char*, const char*> cases[] = {
      {"INT32", "int32"},
      {"INT64", "int64"},
      {"FLOAT", "float"},
      {"DOUBLE", "double"},
      {"STRING", "string"},
      {"ARRAY_INT32", "list<int32>"},
      {"ARRAY_INT64", "list<int64>"},
      {"ARRAY_STRING", "list<string>"},
      {"ARRAY_FLOAT", "list<float>"},
      {"ARRAY_DOUBLE", "list<double>"},
      {"ARRAY_ARRAY_INT32", "list<list<int32>>"},
      {"ARRAY_ARRAY_INT64", "list<list<int64>>"},
      {"ARRAY_ARRAY_STRING", "list<list<string>>"},
      {"ARRAY_ARRAY_FLOAT", "list<list<float>>"},
      {"ARRAY_ARRAY_DOUBLE", "list<list<double>>"},
      {"MAP_STRING_INT32", "map<string, int32>"},
      {"MAP_STRING_INT64", "map<string, int64>"},
      {"MAP_STRING_STRING", "map<string, string>"},
      {"MAP_STRING_FLOAT", "map<string, float>"},
      {"MAP_STRING_DOUBLE", "map<string, double>"},
      {"MAP_INT64_INT32", "map<int64, int32>"},
      {"MAP_INT64_INT64", "map<int64, int64>"},
      {"MAP_INT64_STRING", "map<int64, string>"},
      {"MAP_INT64_FLOAT", "map<int64, float>"},
      {"MAP_INT64_DOUBLE", "map<int64, double>"},
      {"MAP_INT32_INT32", "map<int32, int32>"},
      {"MAP_INT32_INT64", "map<int32, int64>"},
      {"MAP_INT32_STRING", "map<int32, string>"},
      {"MAP_INT32_FLOAT", "map<int32, float>"},
      {"MAP_INT32_DOUBLE", "map<int32, double>"},
      // input_fields_str spellings
      {"bigint", "int64"},
      {"int", "int32"},
      {"array<bigint>", "list<int64>"},
      {"ARRAY< ARRAY<float> >", "list<list<float>>"},
      {"map<string, int>", "map<string, int32>"},
      {"MAP<BIGINT,DOUBLE>", "map<int64, double>"},
  };
  for (const auto& [name, type] : cases) {
    EXPECT_EQ(type_of_field_type(name).to_string(), type) << name;
  }
  // Nullability as pa.list_ / pa.map_ give it: list elements and map values nullable, keys not.
  const ArrowType l = type_of_field_type("ARRAY_INT64");
  EXPECT_TRUE(l.element().nullable);
  const ArrowType m = type_of_field_type("MAP_STRING_FLOAT");
  EXPECT_FALSE(m.key().nullable);
  EXPECT_TRUE(m.value().nullable);

  EXPECT_THROW(type_of_field_type("BOOL"), ConfigError);
  EXPECT_THROW(type_of_field_type("ARRAY_ARRAY_ARRAY_INT32"), ConfigError);
  EXPECT_THROW(type_of_field_type("INTEGER"), ConfigError);
  try {
    schema_from_input_fields({{"a", "INT64"}, {"b", "MAP_FLOAT_INT32"}});
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "input_fields: field 'b': unknown input field type 'MAP_FLOAT_INT32'"),
              std::string::npos)
        << e.what();
  }
  const ArrowSchema s = schema_from_input_fields({{"label", "INT32"}, {"tags", "ARRAY_STRING"}});
  EXPECT_EQ(s.to_string(), "label: int32, tags: list<string>");
  EXPECT_TRUE(s.fields[0].nullable);
}

TEST(IpcSchemaTest, CompareSchemasTellsAddedMissingRetypedAndReordered) {
  const ArrowSchema expected = schema_from_input_fields(
      {{"a", "INT64"}, {"b", "ARRAY_STRING"}, {"c", "MAP_STRING_FLOAT"}, {"d", "DOUBLE"}});
  ArrowSchema actual;
  actual.fields.emplace_back("c", ArrowType::map(t(TypeId::kUtf8), t(TypeId::kFloat32), false),
                             false);
  actual.fields.emplace_back("x", t(TypeId::kInt32));
  actual.fields.emplace_back("a", t(TypeId::kInt64), false);
  // Another element name and non-nullable elements do not count (remove_nullable).
  ArrowType b(TypeId::kList);
  b.children.emplace_back("element", t(TypeId::kUtf8), false);
  actual.fields.emplace_back("b", b);
  SchemaDiff diff = compare_schemas(expected, actual);
  EXPECT_EQ(diff.missing, std::vector<std::string>{"d"});
  EXPECT_EQ(diff.added, std::vector<std::string>{"x"});
  EXPECT_TRUE(diff.retyped.empty());
  EXPECT_TRUE(diff.reordered);
  EXPECT_FALSE(diff.compatible());
  EXPECT_EQ(diff.to_string(), "missing column(s) [d]");

  actual.fields.emplace_back("d", t(TypeId::kFloat32));
  actual.fields[3].type = ArrowType::list(t(TypeId::kUtf8), true, /*large=*/true);
  diff = compare_schemas(expected, actual);
  EXPECT_TRUE(diff.missing.empty());
  EXPECT_EQ(diff.retyped, (std::vector<std::string>{"b: list<string> -> large_list<string>",
                                                    "d: double -> float"}));
  EXPECT_EQ(diff.to_string(),
            "changed column type(s) [b: list<string> -> large_list<string>, d: double -> float]");

  const SchemaDiff same = compare_schemas(expected, expected);
  EXPECT_TRUE(same.identical());
  EXPECT_EQ(same.to_string(), "");

  ArrowSchema added = expected;
  added.fields.emplace_back("extra", t(TypeId::kBool));
  const SchemaDiff tolerated = compare_schemas(expected, added);
  EXPECT_TRUE(tolerated.compatible());
  EXPECT_FALSE(tolerated.identical());
  EXPECT_FALSE(tolerated.reordered);

  // Struct members count by name; map entries do not.
  ArrowType s1(TypeId::kStruct), s2(TypeId::kStruct);
  s1.children.emplace_back("a", t(TypeId::kInt32));
  s2.children.emplace_back("b", t(TypeId::kInt32));
  EXPECT_FALSE(same_type(s1, s2));
  ArrowType m = ArrowType::map(t(TypeId::kUtf8), t(TypeId::kInt64));
  m.children[0].type.children[0].name = "k";
  EXPECT_TRUE(same_type(m, ArrowType::map(t(TypeId::kUtf8), t(TypeId::kInt64))));
  EXPECT_FALSE(same_type(m, ArrowType::map(t(TypeId::kInt64), t(TypeId::kInt64))));
}

TEST(IpcSchemaTest, ParquetDescriptorsAreThoseOfTheSameColumnInParquet) {
  ArrowSchema schema;
  schema.fields.emplace_back("id", t(TypeId::kInt64), false);
  schema.fields.emplace_back("tags", ArrowType::list(t(TypeId::kInt64)));
  schema.fields.emplace_back("m", ArrowType::map(t(TypeId::kUtf8), t(TypeId::kFloat32)));
  schema.fields.emplace_back("seq", ArrowType::list(ArrowType::list(t(TypeId::kUtf8))));
  schema.fields.emplace_back("name", t(TypeId::kLargeUtf8));
  schema.fields.emplace_back("raw", t(TypeId::kBinary));
  schema.fields.emplace_back("small", t(TypeId::kInt8));
  schema.fields.emplace_back("u32", t(TypeId::kUInt32));
  schema.fields.emplace_back("u64", t(TypeId::kUInt64));
  schema.fields.emplace_back("half", t(TypeId::kFloat16));
  const std::vector<ArrowColumn> cols = empty_columns(schema);
  ASSERT_EQ(cols.size(), schema.fields.size());

  const auto& tags = cols[1].values.descriptor;
  EXPECT_EQ(tags.path_string, "tags.list.element");
  EXPECT_EQ(tags.field_name, "tags");
  EXPECT_EQ(tags.type, PhysicalType::kInt64);
  EXPECT_EQ(tags.max_rep, 1);
  EXPECT_EQ(tags.max_def, 3);
  EXPECT_EQ(tags.list_nullable, std::vector<bool>{true});
  EXPECT_TRUE(tags.leaf_nullable);

  ASSERT_TRUE(cols[2].map_values.has_value());
  const auto& keys = cols[2].values.descriptor;
  const auto& values = cols[2].map_values->descriptor;
  EXPECT_EQ(keys.path_string, "m.key_value.key");
  EXPECT_EQ(values.path_string, "m.key_value.value");
  EXPECT_EQ(keys.field_name, "m");
  EXPECT_TRUE(keys.is_string());
  EXPECT_FALSE(keys.leaf_nullable);
  EXPECT_TRUE(values.leaf_nullable);
  EXPECT_EQ(values.type, PhysicalType::kFloat);
  EXPECT_EQ(keys.max_rep, 1);
  EXPECT_EQ(cols[2].values.lists.size(), 1u);

  EXPECT_EQ(cols[3].values.descriptor.path_string, "seq.list.element.list.element");
  EXPECT_EQ(cols[3].values.lists.size(), 2u);
  EXPECT_TRUE(cols[3].values.descriptor.is_string());
  EXPECT_TRUE(cols[4].values.descriptor.is_string());
  EXPECT_EQ(cols[4].values.offsets, std::vector<int64_t>{0});
  EXPECT_FALSE(cols[5].values.descriptor.is_string());
  EXPECT_EQ(cols[0].values.descriptor.path_string, "id");
  EXPECT_FALSE(cols[0].values.descriptor.leaf_nullable);
  EXPECT_EQ(cols[6].values.descriptor.type, PhysicalType::kInt32);
  EXPECT_EQ(cols[6].values.descriptor.converted_type, parquet::ConvertedType::kInt8);
  EXPECT_EQ(cols[7].values.descriptor.type, PhysicalType::kInt64);
  EXPECT_EQ(cols[8].values.descriptor.converted_type, parquet::ConvertedType::kUint64);
  EXPECT_EQ(cols[9].values.descriptor.type, PhysicalType::kFloat);

  // The same columns as the Parquet writer describes them.
  const std::string path = std::string(TZREC_BINARY_DIR) + "/arrow_ipc_schema_test.parquet";
  {
    std::vector<parquet::WriterField> f(4);
    f[0] = {"id", PhysicalType::kInt64, /*nullable=*/false};
    f[1] = {"tags", PhysicalType::kInt64, true, /*list_depth=*/1, /*element_nullable=*/true};
    f[2] = {"seq", PhysicalType::kByteArray, true, 2, true};
    f[3] = {"name", PhysicalType::kByteArray, true};
    parquet::FileWriter writer(path, f);
    const size_t ours[] = {0, 1, 3, 4};
    for (size_t i = 0; i < 4; ++i) {
      const parquet::ColumnDescriptor& want = writer.schema().column(static_cast<int>(i));
      const parquet::ColumnDescriptor& got = cols[ours[i]].values.descriptor;
      EXPECT_EQ(got.path_string, want.path_string);
      EXPECT_EQ(got.field_name, want.field_name);
      EXPECT_EQ(got.type, want.type);
      EXPECT_EQ(got.max_def, want.max_def) << want.path_string;
      EXPECT_EQ(got.max_rep, want.max_rep) << want.path_string;
      EXPECT_EQ(got.repeated_def, want.repeated_def) << want.path_string;
      EXPECT_EQ(got.list_nullable, want.list_nullable) << want.path_string;
      EXPECT_EQ(got.leaf_nullable, want.leaf_nullable) << want.path_string;
      EXPECT_EQ(got.is_string(), want.is_string()) << want.path_string;
    }
    writer.close();
  }
  std::remove(path.c_str());
}

TEST(IpcSchemaTest, FieldOfAColumnGivesItsArrowType) {
  ArrowSchema schema;
  schema.fields.emplace_back("id", t(TypeId::kInt64), false);
  schema.fields.emplace_back("tags", ArrowType::list(t(TypeId::kInt32), false));
  schema.fields.emplace_back("m", ArrowType::map(t(TypeId::kInt64), t(TypeId::kUtf8)));
  schema.fields.emplace_back("seq", ArrowType::list(ArrowType::list(t(TypeId::kFloat64))), false);
  schema.fields.emplace_back("small", t(TypeId::kUInt16));
  schema.fields.emplace_back("big", t(TypeId::kUInt64));
  schema.fields.emplace_back("raw", t(TypeId::kBinary));
  const std::vector<ArrowColumn> cols = empty_columns(schema);
  for (size_t i = 0; i < cols.size(); ++i) {
    const ArrowField f = field_of(cols[i]);
    EXPECT_EQ(f.name, schema.fields[i].name);
    EXPECT_TRUE(same_type(f.type, schema.fields[i].type)) << f.type.to_string();
    EXPECT_EQ(f.nullable, schema.fields[i].nullable) << f.name;
  }
  EXPECT_FALSE(field_of(cols[1]).type.element().nullable);
  EXPECT_TRUE(field_of(cols[3]).type.element().nullable);
}

TEST(IpcSchemaTest, UnsupportedTypesAreRefusedByName) {
  ArrowType s(TypeId::kStruct);
  s.children.emplace_back("a", t(TypeId::kInt32));
  const ArrowField st("s", s);
  EXPECT_FALSE(is_supported(st));
  try {
    check_supported(st, "topic t partition 3 offset 17");
    FAIL() << "no error";
  } catch (const NotSupportedError& e) {
    EXPECT_STREQ(e.what(),
                 "not supported yet: Arrow type struct<a: int32> of column 's' (topic t partition "
                 "3 offset 17)");
  }
  EXPECT_FALSE(is_supported(ArrowField("l", ArrowType::list(s))));
  EXPECT_FALSE(is_supported(
      ArrowField("lm", ArrowType::list(ArrowType::map(t(TypeId::kUtf8), t(TypeId::kInt64))))));
  EXPECT_FALSE(is_supported(
      ArrowField("ml", ArrowType::map(t(TypeId::kUtf8), ArrowType::list(t(TypeId::kInt64))))));
  EXPECT_FALSE(is_supported(ArrowField("n", t(TypeId::kNull))));
  EXPECT_TRUE(is_supported(
      ArrowField("lll", ArrowType::list(ArrowType::list(ArrowType::list(t(TypeId::kInt8)))))));
  EXPECT_TRUE(is_supported(ArrowField("mb", ArrowType::map(t(TypeId::kInt32), t(TypeId::kBool)))));
  ArrowSchema schema;
  schema.fields.push_back(st);
  EXPECT_THROW(parquet_schema(schema), NotSupportedError);
  EXPECT_THROW(schema_to_flatbuffer(schema), NotSupportedError);
}

TEST(IpcSchemaTest, SchemaFlatbufferRoundTrip) {
  ArrowSchema schema;
  const TypeId prims[] = {
      TypeId::kBool,   TypeId::kInt8,      TypeId::kInt16,   TypeId::kInt32,
      TypeId::kInt64,  TypeId::kUInt8,     TypeId::kUInt16,  TypeId::kUInt32,
      TypeId::kUInt64, TypeId::kFloat16,   TypeId::kFloat32, TypeId::kFloat64,
      TypeId::kUtf8,   TypeId::kLargeUtf8, TypeId::kBinary,  TypeId::kLargeBinary};
  for (TypeId id : prims) {
    schema.fields.emplace_back("c" + std::to_string(schema.fields.size()), t(id),
                               id != TypeId::kInt64);
  }
  schema.fields.emplace_back(
      "l", ArrowType::list(ArrowType::list(t(TypeId::kInt64), false), true, true));
  schema.fields.emplace_back("m", ArrowType::map(t(TypeId::kInt32), t(TypeId::kUtf8), false),
                             false);
  const std::string buf = schema_to_flatbuffer(schema).finish();
  const ArrowSchema back = schema_from_flatbuffer(
      FbTable::root(reinterpret_cast<const uint8_t*>(buf.data()), buf.size()));
  EXPECT_EQ(back.to_string(), schema.to_string());
  ASSERT_EQ(back.fields.size(), schema.fields.size());
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    EXPECT_TRUE(same_type(back.fields[i].type, schema.fields[i].type)) << i;
    EXPECT_EQ(back.fields[i].nullable, schema.fields[i].nullable) << i;
  }
  EXPECT_TRUE(back.fields[16].type.element().nullable);
  EXPECT_FALSE(back.fields[16].type.element().type.element().nullable);
  EXPECT_FALSE(back.fields[17].type.value().nullable);
  EXPECT_EQ(back.fields[17].type.children[0].name, "entries");
  EXPECT_EQ(back.fields[17].type.key().name, "key");
}

}  // namespace ipc_schema_test
}  // namespace tzrec::arrow
