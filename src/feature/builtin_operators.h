// The custom operators of TorchEasyRec's official operator libraries ("pyfg/lib/lib*.so" in a
// custom_feature's operator_lib_file) that this engine builds in, behind the custom operator C ABI
// (include/tzrec/custom_operator.h; docs/custom_operators.md lists them and their semantics).
#pragma once

#include <string>
#include <vector>

struct tzrec_custom_operator;

namespace tzrec::feature {

// The operator_params key under which a custom_feature hands a built-in operator the names of its
// inputs (the input_name of each `side:input_name` expression), as a JSON array.
inline constexpr const char* kBuiltinInputNamesKey = "__input_names__";

// The built-in operator `operator_name` of official library `lib_file`, or nullptr.
const tzrec_custom_operator* builtin_custom_operator(const std::string& lib_file, const std::string& operator_name);

// "EditDistance (pyfg/lib/libedit_distance.so)", ... for messages.
std::vector<std::string> builtin_custom_operator_names();

}  // namespace tzrec::feature
