// data_config.input_fields and its short form input_fields_str (no torch): the names, and the
// FieldType names, of the input columns (CSV without a header, KafkaDataset's schema-less
// messages).
#pragma once

#include <string>
#include <vector>

#include "tzrec/protos/data.pb.h"

namespace tzrec::data {

struct InputField {
  std::string name;
  std::string type;  // a FieldType name ("INT64", "ARRAY_STRING", "MAP_STRING_FLOAT"); empty: none
};

// The FieldType name of an input_fields_str type, as TorchEasyRec reads it
// (tzrec/datasets/utils.py): case and spaces do not matter, BIGINT is INT64 and INT is INT32
// (also inside ARRAY<> and MAP<>), and the types are INT32, INT64, STRING, FLOAT, DOUBLE,
// ARRAY<T> and ARRAY<ARRAY<T>> of those, MAP<K,V> with K STRING, INT64 or INT32 and V one of the
// five ("map<string, bigint>" → "MAP_STRING_INT64"). Empty for any other text.
std::string field_type_of(const std::string& type_text);

// The fields of input_fields_str ("name:TYPE;name:TYPE;"; it wins when set and not empty, even
// when it holds only spaces), else of input_fields (type empty where input_type is not set). Throws ConfigError naming
// data_config.input_fields_str and the item for an item without ':', an empty name or type, or
// a type field_type_of does not know.
std::vector<InputField> input_fields(const protos::DataConfig& data_config);

}  // namespace tzrec::data
