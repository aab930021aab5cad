#include "data/input_fields.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "data/testing_util.h"

namespace tzrec::data {
namespace input_fields_test {

using testing::error_of;

// Expected names: the type table of TorchEasyRec's docs/source/feature/data.md "input_fields_str"
// and tzrec/datasets/utils.py TYPE_STR_TO_FIELD_TYPE (aliases BIGINT = INT64, INT = INT32, case
// and spaces ignored).
TEST(InputFields, FieldTypeOfTheDocumentedTypeNames) {
  EXPECT_EQ(field_type_of("BIGINT"), "INT64");
  EXPECT_EQ(field_type_of("int"), "INT32");
  EXPECT_EQ(field_type_of("Int64"), "INT64");
  EXPECT_EQ(field_type_of("string"), "STRING");
  EXPECT_EQ(field_type_of("DOUBLE"), "DOUBLE");
  EXPECT_EQ(field_type_of("ARRAY<FLOAT>"), "ARRAY_FLOAT");
  EXPECT_EQ(field_type_of("array<bigint>"), "ARRAY_INT64");
  EXPECT_EQ(field_type_of("ARRAY<ARRAY<INT>>"), "ARRAY_ARRAY_INT32");
  EXPECT_EQ(field_type_of("MAP<STRING, BIGINT>"), "MAP_STRING_INT64");
  EXPECT_EQ(field_type_of(" map < int , string > "), "MAP_INT32_STRING");
  EXPECT_EQ(field_type_of("MAP<BIGINT,DOUBLE>"), "MAP_INT64_DOUBLE");
  // Not in the table: the enum spelling, other key types, three levels, unknown names.
  EXPECT_EQ(field_type_of("ARRAY_INT64"), "");
  EXPECT_EQ(field_type_of("MAP<FLOAT,INT>"), "");
  EXPECT_EQ(field_type_of("ARRAY<ARRAY<ARRAY<INT>>>"), "");
  EXPECT_EQ(field_type_of("BOOLEAN"), "");
  EXPECT_EQ(field_type_of("INTEGER"), "");
  EXPECT_EQ(field_type_of(""), "");
}

TEST(InputFields, InputFieldsStrWinsOverInputFields) {
  protos::DataConfig dc;
  dc.add_input_fields()->set_input_name("ignored");
  dc.set_input_fields_str(" user_id:BIGINT; item_id : bigint ;label:FLOAT;features:ARRAY<FLOAT>;m:MAP<STRING, INT>;");
  const auto fields = input_fields(dc);
  ASSERT_EQ(fields.size(), 5u);
  EXPECT_EQ(fields[0].name, "user_id");
  EXPECT_EQ(fields[0].type, "INT64");
  EXPECT_EQ(fields[1].name, "item_id");
  EXPECT_EQ(fields[1].type, "INT64");
  EXPECT_EQ(fields[2].type, "FLOAT");
  EXPECT_EQ(fields[3].type, "ARRAY_FLOAT");
  EXPECT_EQ(fields[4].name, "m");
  EXPECT_EQ(fields[4].type, "MAP_STRING_INT32");
  // Set but only spaces: no fields (TorchEasyRec strips it and returns none).
  dc.set_input_fields_str("  ");
  EXPECT_TRUE(input_fields(dc).empty());
  // Empty: input_fields, with the type where one is set.
  dc.set_input_fields_str("");
  dc.mutable_input_fields(0)->set_input_type(protos::ARRAY_STRING);
  dc.add_input_fields()->set_input_name("untyped");
  const auto listed = input_fields(dc);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].name, "ignored");
  EXPECT_EQ(listed[0].type, "ARRAY_STRING");
  EXPECT_EQ(listed[1].type, "");
}

TEST(InputFields, BadInputFieldsStrItemsNameTheItem) {
  auto error = [](const std::string& text) {
    protos::DataConfig dc;
    dc.set_input_fields_str(text);
    return error_of<ConfigError>([&] { input_fields(dc); });
  };
  EXPECT_EQ(error("a:INT64;b"),
            "data_config.input_fields_str: 'b': expected 'field_name:field_type' (items are joined by ';')");
  EXPECT_EQ(error(" :INT64"), "data_config.input_fields_str: ':INT64': empty field name");
  EXPECT_EQ(error("a: "), "data_config.input_fields_str: 'a:': empty field type");
  const std::string unknown = error("a:INT64;b:ARRAY<BOOL>");
  EXPECT_EQ(unknown.rfind("data_config.input_fields_str: 'b:ARRAY<BOOL>': unknown field type 'ARRAY<BOOL>'; the "
                          "types are ",
                          0),
            0u)
      << unknown;
  EXPECT_NE(unknown.find("MAP<STRING,INT64>"), std::string::npos) << unknown;
}

}  // namespace input_fields_test
}  // namespace tzrec::data
