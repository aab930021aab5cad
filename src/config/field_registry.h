// Every field of the config schema, classified once: honoured (this engine does what TorchEasyRec
// does with it), refused ("not supported yet: <field path>"), or accepted with a warning because
// it has no meaning for this engine (the warning says why). validate() walks every field set in
// a loaded config against this registry, so no set field is silently ignored; a test walks the
// whole schema and fails on any field without a rule.
#pragma once

#include <string>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

namespace tzrec::config {

enum class FieldSupport { kHonoured, kRefused, kWarned };

struct FieldRule {
  FieldSupport support;
  std::string why;  // kWarned: why the field has no effect here
};

// The rule of `field` (a field of a tzrec.protos message), or nullptr when it has none.
const FieldRule* field_rule(const google::protobuf::FieldDescriptor* field);

// Registry entries naming a message or field that does not exist in the schema (stale entries).
std::vector<std::string> unknown_registry_entries();

struct FieldFinding {
  std::string path;  // e.g. "data_config.shuffle", "feature_configs[2].id_feature.zch"
  FieldSupport support;
  std::string why;
};

// Every field set in `msg` (recursively; below refused fields nothing is reported) that is
// refused or warned about. A scalar set to its default value has no effect and is not reported;
// a field without a rule is reported as refused.
std::vector<FieldFinding> check_set_fields(const google::protobuf::Message& msg);

}  // namespace tzrec::config
