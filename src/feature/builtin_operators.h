// The custom operators of TorchEasyRec's official operator libraries ("pyfg/lib/lib*.so" in a
// custom_feature's operator_lib_file) that this engine builds in, behind the custom operator C ABI
// (include/tzrec/custom_operator.h; docs/custom_operators.md lists them and their semantics).
#pragma once

#include <string>
#include <vector>

struct tzrec_custom_operator;

namespace tzrec::feature {

// The built-in operator `operator_name` of official library `lib_file`, or nullptr.
const tzrec_custom_operator* builtin_custom_operator(const std::string& lib_file, const std::string& operator_name);

// "EditDistance (pyfg/lib/libedit_distance.so)", ... for messages.
std::vector<std::string> builtin_custom_operator_names();

}  // namespace tzrec::feature
