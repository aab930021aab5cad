#include "nn/activation.h"

#include <cerrno>
#include <cstdlib>
#include <map>
#include <optional>
#include <variant>
#include <vector>

#include "base/activation_string.h"
#include "base/error.h"
#include "base/text.h"

namespace tzrec::nn {
namespace {

// A Python literal as tzrec's eval() would see it in "name=value".
struct Literal {
  enum class Kind { kNumber, kBool, kString } kind;
  double number = 0.0;
  bool is_integer = false;
  int64_t integer = 0;
  bool boolean = false;
  std::string text;
};

[[noreturn]] void bad(const std::string& activation, const std::string& why) {
  throw ConfigError(fmt::format("activation \"{}\": {}", activation, why));
}

Literal parse_literal(const std::string& activation, const std::string& key, const std::string& raw) {
  Literal lit;
  std::string v = trim(raw);
  if (v == "True" || v == "False") {
    lit.kind = Literal::Kind::kBool;
    lit.boolean = v == "True";
    return lit;
  }
  if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) {
    lit.kind = Literal::Kind::kString;
    lit.text = v.substr(1, v.size() - 2);
    return lit;
  }
  lit.kind = Literal::Kind::kNumber;
  if (!v.empty()) {
    errno = 0;
    char* end = nullptr;
    long long as_int = std::strtoll(v.c_str(), &end, 10);
    if (errno == 0 && end == v.c_str() + v.size()) {
      lit.is_integer = true;
      lit.integer = as_int;
      lit.number = static_cast<double>(as_int);
      return lit;
    }
    errno = 0;
    double as_double = std::strtod(v.c_str(), &end);
    if (errno == 0 && end == v.c_str() + v.size()) {
      lit.number = as_double;
      return lit;
    }
  }
  bad(activation, fmt::format("cannot parse value \"{}\" of argument {}; expected a number, "
                              "True/False or a quoted string",
                              v, key));
}

// Keyword arguments; each getter consumes its key so leftovers can be reported as unknown.
class Kwargs {
 public:
  Kwargs(std::string activation, std::map<std::string, Literal> values)
      : activation_(std::move(activation)), values_(std::move(values)) {}

  double number(const std::string& key, double fallback) {
    auto lit = take(key);
    if (!lit) return fallback;
    if (lit->kind != Literal::Kind::kNumber) bad(activation_, fmt::format("argument {} must be a number", key));
    return lit->number;
  }
  int64_t integer(const std::string& key, int64_t fallback) {
    auto lit = take(key);
    if (!lit) return fallback;
    if (lit->kind != Literal::Kind::kNumber || !lit->is_integer) {
      bad(activation_, fmt::format("argument {} must be an integer", key));
    }
    return lit->integer;
  }
  bool boolean(const std::string& key, bool fallback) {
    auto lit = take(key);
    if (!lit) return fallback;
    if (lit->kind != Literal::Kind::kBool) bad(activation_, fmt::format("argument {} must be True or False", key));
    return lit->boolean;
  }
  std::string string(const std::string& key, const std::string& fallback) {
    auto lit = take(key);
    if (!lit) return fallback;
    if (lit->kind != Literal::Kind::kString) {
      bad(activation_, fmt::format("argument {} must be a quoted string", key));
    }
    return lit->text;
  }
  // Throws for any argument the class does not take.
  void finish(const std::string& class_name) const {
    if (values_.empty()) return;
    bad(activation_, fmt::format("unknown argument {} for nn.{}", values_.begin()->first, class_name));
  }

 private:
  std::optional<Literal> take(const std::string& key) {
    auto it = values_.find(key);
    if (it == values_.end()) return std::nullopt;
    Literal lit = it->second;
    values_.erase(it);
    return lit;
  }

  std::string activation_;
  std::map<std::string, Literal> values_;
};

constexpr const char* kSupported =
    "ReLU, LeakyReLU, Sigmoid, Tanh, PReLU, ELU, GELU, SiLU, Softplus, Identity, ReLU6, SELU, Mish, "
    "Softsign";

}  // namespace

torch::nn::AnyModule create_activation(const std::string& activation) {
  const std::string s = trim(activation);
  if (s.empty()) return {};
  const ActivationString parsed = parse_activation_string(s);
  if (parsed.name == "Dice") throw NotSupportedError("activation Dice");
  const std::string& class_name = parsed.name;
  std::map<std::string, Literal> values;
  for (const auto& [key, raw] : parsed.kwargs) values.emplace(key, parse_literal(s, key, raw));
  Kwargs kw(s, std::move(values));

  torch::nn::AnyModule module;
  if (class_name == "ReLU") {
    module = torch::nn::AnyModule(torch::nn::ReLU(torch::nn::ReLUOptions(kw.boolean("inplace", false))));
  } else if (class_name == "LeakyReLU") {
    auto opts = torch::nn::LeakyReLUOptions()
                    .negative_slope(kw.number("negative_slope", 0.01))
                    .inplace(kw.boolean("inplace", false));
    module = torch::nn::AnyModule(torch::nn::LeakyReLU(opts));
  } else if (class_name == "Sigmoid") {
    module = torch::nn::AnyModule(torch::nn::Sigmoid());
  } else if (class_name == "Tanh") {
    module = torch::nn::AnyModule(torch::nn::Tanh());
  } else if (class_name == "PReLU") {
    int64_t num_parameters = kw.integer("num_parameters", 1);
    if (num_parameters < 1) bad(s, "num_parameters must be >= 1");
    auto opts = torch::nn::PReLUOptions().num_parameters(num_parameters).init(kw.number("init", 0.25));
    module = torch::nn::AnyModule(torch::nn::PReLU(opts));
  } else if (class_name == "ELU") {
    auto opts = torch::nn::ELUOptions().alpha(kw.number("alpha", 1.0)).inplace(kw.boolean("inplace", false));
    module = torch::nn::AnyModule(torch::nn::ELU(opts));
  } else if (class_name == "GELU") {
    std::string approximate = kw.string("approximate", "none");
    if (approximate != "none" && approximate != "tanh") bad(s, "approximate must be 'none' or 'tanh'");
    module = torch::nn::AnyModule(torch::nn::GELU(torch::nn::GELUOptions().approximate(approximate)));
  } else if (class_name == "SiLU") {
    kw.boolean("inplace", false);  // same values either way; libtorch's SiLU has no inplace flag
    module = torch::nn::AnyModule(torch::nn::SiLU());
  } else if (class_name == "Softplus") {
    auto opts = torch::nn::SoftplusOptions().beta(kw.number("beta", 1.0)).threshold(kw.number("threshold", 20.0));
    module = torch::nn::AnyModule(torch::nn::Softplus(opts));
  } else if (class_name == "Identity") {
    module = torch::nn::AnyModule(torch::nn::Identity());
  } else if (class_name == "ReLU6") {
    module = torch::nn::AnyModule(torch::nn::ReLU6(torch::nn::ReLU6Options(kw.boolean("inplace", false))));
  } else if (class_name == "SELU") {
    module = torch::nn::AnyModule(torch::nn::SELU(torch::nn::SELUOptions(kw.boolean("inplace", false))));
  } else if (class_name == "Mish") {
    kw.boolean("inplace", false);  // same values either way; libtorch's Mish has no inplace flag
    module = torch::nn::AnyModule(torch::nn::Mish());
  } else if (class_name == "Softsign") {
    module = torch::nn::AnyModule(torch::nn::Softsign());
  } else {
    bad(s, fmt::format("unknown activation class nn.{} (supported torch.nn classes: {})", class_name, kSupported));
  }
  kw.finish(class_name);
  return module;
}

}  // namespace tzrec::nn
