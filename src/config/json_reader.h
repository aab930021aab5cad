// JSON -> protobuf message, following protobuf's JSON mapping (field names or lowerCamelCase
// json names, enums by name or number, 64-bit ints as numbers or strings, maps as objects),
// but without enforcing proto2 `required` fields (TorchEasyRec's json_format.Parse does not).
#pragma once

#include <string>

#include <google/protobuf/message.h>

namespace tzrec::config::detail {

// Merges JSON `text` into `out`. Throws ConfigError "source:line:column: message" for
// syntax errors and "source[:line:column]: <field path>: message" for schema errors.
void json_to_message(const std::string& text, const std::string& source,
                     google::protobuf::Message* out);

}  // namespace tzrec::config::detail
