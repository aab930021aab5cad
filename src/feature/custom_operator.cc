#include "feature/custom_operator.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <tzrec/custom_operator.h>

#include "base/error.h"
#include "feature/builtin_operators.h"

namespace tzrec::feature {
namespace {

constexpr const char* kOfficialPrefix = "pyfg/lib/";
constexpr size_t kErrorSize = 1024;

struct OutputSink {
  std::vector<CustomOperator::Value>* values;
};

void add_number(tzrec_operator_output* out, double value) {
  CustomOperator::Value v;
  v.number = value;
  reinterpret_cast<OutputSink*>(out)->values->push_back(std::move(v));
}

void add_text(tzrec_operator_output* out, const char* data, size_t size) {
  CustomOperator::Value v;
  v.is_text = true;
  v.text.assign(data, size);
  reinterpret_cast<OutputSink*>(out)->values->push_back(std::move(v));
}

const tzrec_operator_output_api kOutputApi = {&add_number, &add_text};

}  // namespace

bool CustomOperator::is_official_library(const std::string& lib_file) { return lib_file.rfind(kOfficialPrefix, 0) == 0; }

CustomOperator::CustomOperator(const std::string& lib_file, const std::string& operator_name,
                               const std::string& params_json, bool config_thread_safe, const std::string& path) {
  if (is_official_library(lib_file)) {
    op_ = builtin_custom_operator(lib_file, operator_name);
    if (op_ == nullptr) {
      throw NotSupportedError(fmt::format("{}: official operator {} of {} (built in: {})", path, operator_name, lib_file,
                                          fmt::join(builtin_custom_operator_names(), ", ")));
    }
  } else {
    library_ = ::dlopen(lib_file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library_ == nullptr) {
      const char* why = ::dlerror();
      throw ConfigError(fmt::format("{}.operator_lib_file: cannot load {} ({}); give the path of a shared library "
                                    "built against include/tzrec/custom_operator.h",
                                    path, lib_file, why ? why : "unknown error"));
    }
    auto get = reinterpret_cast<tzrec_get_custom_operator_fn>(::dlsym(library_, TZREC_GET_CUSTOM_OPERATOR_SYMBOL));
    if (get == nullptr) {
      ::dlclose(library_);
      throw ConfigError(fmt::format("{}.operator_lib_file: {} does not export {} (the custom operator ABI, "
                                    "include/tzrec/custom_operator.h)",
                                    path, lib_file, TZREC_GET_CUSTOM_OPERATOR_SYMBOL));
    }
    op_ = get(operator_name.c_str());
    if (op_ == nullptr) {
      ::dlclose(library_);
      throw ConfigError(fmt::format("{}.operator_name: {} has no operator named {}", path, lib_file, operator_name));
    }
  }
  if (op_->abi_version == 0 || op_->abi_version > TZREC_CUSTOM_OPERATOR_ABI_VERSION || op_->create == nullptr ||
      op_->evaluate == nullptr || op_->destroy == nullptr) {
    if (library_ != nullptr) ::dlclose(library_);
    throw ConfigError(fmt::format("{}.operator_lib_file: operator {} of {} is built for custom operator ABI version "
                                  "{} (this engine: 1..{}) or lacks create / evaluate / destroy",
                                  path, operator_name, lib_file, op_->abi_version, TZREC_CUSTOM_OPERATOR_ABI_VERSION));
  }
  char error[kErrorSize] = {0};
  state_ = op_->create(params_json.c_str(), error, sizeof(error));
  if (state_ == nullptr) {
    if (library_ != nullptr) ::dlclose(library_);
    error[kErrorSize - 1] = '\0';
    throw ConfigError(fmt::format("{}.operator_params: operator {} of {} refused its parameters {}: {}", path,
                                  operator_name, lib_file, params_json, error[0] ? error : "no message"));
  }
  serialize_ = !(config_thread_safe || op_->thread_safe != 0);
}

CustomOperator::~CustomOperator() {
  if (op_ != nullptr && state_ != nullptr) op_->destroy(state_);
  if (library_ != nullptr) ::dlclose(library_);
}

bool CustomOperator::evaluate(const std::vector<std::vector<std::string_view>>& inputs, std::vector<Value>* out,
                              std::string* error) const {
  // Per-thread scratch, reused row after row (the views of every input in one array).
  thread_local std::vector<tzrec_string_view> views;
  thread_local std::vector<tzrec_operator_input> args;
  views.clear();
  for (const auto& input : inputs) {
    for (std::string_view v : input) views.push_back({v.data(), v.size()});
  }
  args.resize(inputs.size());
  size_t begin = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    args[i] = {views.data() + begin, inputs[i].size()};
    begin += inputs[i].size();
  }
  OutputSink sink{out};
  char message[kErrorSize];
  message[0] = '\0';  // (messages are written NUL-terminated: include/tzrec/custom_operator.h)
  int rc = 0;
  {
    std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
    if (serialize_) lock.lock();
    rc = op_->evaluate(state_, args.data(), args.size(), reinterpret_cast<tzrec_operator_output*>(&sink), &kOutputApi,
                       message, sizeof(message));
  }
  if (rc == 0) return true;
  message[kErrorSize - 1] = '\0';
  *error = message[0] ? message : "no message";
  return false;
}

}  // namespace tzrec::feature
