// A custom_feature operator (include/tzrec/custom_operator.h, docs/custom_operators.md): loaded
// from a shared library — or, for TorchEasyRec's official libraries ("pyfg/lib/..."), one of the
// operators built into this engine (builtin_operators.h) — created once with its parameters and
// evaluated per row.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

struct tzrec_custom_operator;

namespace tzrec::feature {

class CustomOperator {
 public:
  // One output value of a row, in the order the operator added them.
  struct Value {
    bool is_text = false;
    double number = 0;
    std::string text;
  };

  // Loads `operator_name` from `lib_file` and creates it with `params_json` (a JSON object).
  // `config_thread_safe`: the config's is_op_thread_safe. `path`: the feature's config path.
  // ConfigError naming the file and symbol (library missing or not loadable, symbol missing,
  // operator unknown to it, ABI version, create() failing); NotSupportedError for an official
  // library whose operators are not built in.
  CustomOperator(const std::string& lib_file, const std::string& operator_name, const std::string& params_json,
                 bool config_thread_safe, const std::string& path);
  ~CustomOperator();
  CustomOperator(const CustomOperator&) = delete;
  CustomOperator& operator=(const CustomOperator&) = delete;

  // Evaluates one row: `inputs[i]` holds the values of input i. Appends the row's values to
  // `out`; false with the operator's message in `error` when it fails.
  bool evaluate(const std::vector<std::vector<std::string_view>>& inputs, std::vector<Value>* out,
                std::string* error) const;

  // True when `lib_file` names one of TorchEasyRec's official libraries ("pyfg/lib/...").
  static bool is_official_library(const std::string& lib_file);

 private:
  void* library_ = nullptr;  // dlopen handle; null for built-in operators
  const tzrec_custom_operator* op_ = nullptr;
  void* state_ = nullptr;
  bool serialize_ = true;
  mutable std::mutex mutex_;
};

}  // namespace tzrec::feature
