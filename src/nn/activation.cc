#include "nn/activation.h"

#include <cerrno>
#include <cmath>
#include <limits>
#include <cstdlib>
#include <map>
#include <optional>
#include <variant>
#include <vector>

#include "base/activation_string.h"
#include "base/error.h"
#include "base/text.h"
#include "nn/dice.h"

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
    bad(activation_, fmt::format("unknown argument {} for {}{}", values_.begin()->first,
                                 class_name == "Dice" ? "" : "nn.", class_name));
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

// PyTorch's implicit dim of Softmax / LogSoftmax / Softmin without `dim`
// (torch.nn.functional._get_softmax_dim): 0 for inputs of rank 0, 1 or 3, else 1.
int64_t implicit_softmax_dim(const torch::Tensor& x) {
  const int64_t rank = x.dim();
  return (rank == 0 || rank == 1 || rank == 3) ? 0 : 1;
}

// A softmax-like module: `dim` given, or PyTorch's implicit choice per input.
template <class F>
torch::nn::AnyModule softmax_like(Kwargs& kw, F f) {
  const int64_t none = std::numeric_limits<int64_t>::min();
  const int64_t dim = kw.integer("dim", none);
  return torch::nn::AnyModule(torch::nn::Functional(
      [dim, none, f](const torch::Tensor& x) { return f(x, dim == none ? implicit_softmax_dim(x) : dim); }));
}

// What a builder gets: the arguments, and the width and rank of the layer (for Dice).
struct Site {
  const std::string& activation;
  Kwargs& kw;
  int64_t hidden_size;
  int64_t dim;
};
using Builder = torch::nn::AnyModule (*)(Site&);

// The torch.nn activation classes by name, with PyTorch's arguments and defaults, plus tzrec's Dice.
const std::map<std::string, Builder>& builders() {
  using torch::nn::AnyModule;
  static const std::map<std::string, Builder> table = {
      {"ReLU", [](Site& s) { return AnyModule(torch::nn::ReLU(torch::nn::ReLUOptions(s.kw.boolean("inplace", false)))); }},
      {"LeakyReLU",
       [](Site& s) {
         auto opts = torch::nn::LeakyReLUOptions()
                         .negative_slope(s.kw.number("negative_slope", 0.01))
                         .inplace(s.kw.boolean("inplace", false));
         return AnyModule(torch::nn::LeakyReLU(opts));
       }},
      {"Sigmoid", [](Site&) { return AnyModule(torch::nn::Sigmoid()); }},
      {"Tanh", [](Site&) { return AnyModule(torch::nn::Tanh()); }},
      {"PReLU",
       [](Site& s) {
         int64_t num_parameters = s.kw.integer("num_parameters", 1);
         if (num_parameters < 1) bad(s.activation, "num_parameters must be >= 1");
         auto opts = torch::nn::PReLUOptions().num_parameters(num_parameters).init(s.kw.number("init", 0.25));
         return AnyModule(torch::nn::PReLU(opts));
       }},
      {"ELU",
       [](Site& s) {
         auto opts = torch::nn::ELUOptions().alpha(s.kw.number("alpha", 1.0)).inplace(s.kw.boolean("inplace", false));
         return AnyModule(torch::nn::ELU(opts));
       }},
      {"CELU",
       [](Site& s) {
         const double alpha = s.kw.number("alpha", 1.0);
         if (alpha == 0.0) bad(s.activation, "alpha must not be 0");
         auto opts = torch::nn::CELUOptions().alpha(alpha).inplace(s.kw.boolean("inplace", false));
         return AnyModule(torch::nn::CELU(opts));
       }},
      {"GELU",
       [](Site& s) {
         std::string approximate = s.kw.string("approximate", "none");
         if (approximate != "none" && approximate != "tanh") bad(s.activation, "approximate must be 'none' or 'tanh'");
         return AnyModule(torch::nn::GELU(torch::nn::GELUOptions().approximate(approximate)));
       }},
      {"SiLU",
       [](Site& s) {
         s.kw.boolean("inplace", false);  // same values either way; libtorch's SiLU has no inplace flag
         return AnyModule(torch::nn::SiLU());
       }},
      {"Mish",
       [](Site& s) {
         s.kw.boolean("inplace", false);  // same values either way; libtorch's Mish has no inplace flag
         return AnyModule(torch::nn::Mish());
       }},
      {"Hardsigmoid",
       [](Site& s) {
         s.kw.boolean("inplace", false);
         return AnyModule(torch::nn::Functional([](const torch::Tensor& x) { return torch::hardsigmoid(x); }));
       }},
      {"Hardswish",
       [](Site& s) {
         s.kw.boolean("inplace", false);
         return AnyModule(torch::nn::Functional([](const torch::Tensor& x) { return torch::hardswish(x); }));
       }},
      {"Hardtanh",
       [](Site& s) {
         const double lo = s.kw.number("min_val", -1.0), hi = s.kw.number("max_val", 1.0);
         if (!(hi > lo)) bad(s.activation, "max_val must be greater than min_val");
         auto opts = torch::nn::HardtanhOptions().min_val(lo).max_val(hi).inplace(s.kw.boolean("inplace", false));
         return AnyModule(torch::nn::Hardtanh(opts));
       }},
      {"ReLU6",
       [](Site& s) { return AnyModule(torch::nn::ReLU6(torch::nn::ReLU6Options(s.kw.boolean("inplace", false)))); }},
      {"SELU",
       [](Site& s) { return AnyModule(torch::nn::SELU(torch::nn::SELUOptions(s.kw.boolean("inplace", false)))); }},
      {"RReLU",
       [](Site& s) {
         const double lower = s.kw.number("lower", 1.0 / 8), upper = s.kw.number("upper", 1.0 / 3);
         if (!(lower <= upper)) bad(s.activation, "lower must not exceed upper");
         auto opts = torch::nn::RReLUOptions().lower(lower).upper(upper).inplace(s.kw.boolean("inplace", false));
         return AnyModule(torch::nn::RReLU(opts));
       }},
      {"Threshold",
       [](Site& s) {
         const double none = std::numeric_limits<double>::quiet_NaN();
         const double threshold = s.kw.number("threshold", none), value = s.kw.number("value", none);
         if (std::isnan(threshold) || std::isnan(value)) {
           bad(s.activation, "nn.Threshold needs both threshold=... and value=...");
         }
         return AnyModule(torch::nn::Threshold(
             torch::nn::ThresholdOptions(threshold, value).inplace(s.kw.boolean("inplace", false))));
       }},
      {"Softplus",
       [](Site& s) {
         auto opts =
             torch::nn::SoftplusOptions().beta(s.kw.number("beta", 1.0)).threshold(s.kw.number("threshold", 20.0));
         return AnyModule(torch::nn::Softplus(opts));
       }},
      {"Softsign", [](Site&) { return AnyModule(torch::nn::Softsign()); }},
      {"Softshrink",
       [](Site& s) {
         const double lambd = s.kw.number("lambd", 0.5);
         if (lambd < 0) bad(s.activation, "lambd must be >= 0");
         return AnyModule(torch::nn::Softshrink(torch::nn::SoftshrinkOptions(lambd)));
       }},
      {"Hardshrink",
       [](Site& s) { return AnyModule(torch::nn::Hardshrink(torch::nn::HardshrinkOptions(s.kw.number("lambd", 0.5)))); }},
      {"LogSigmoid", [](Site&) { return AnyModule(torch::nn::LogSigmoid()); }},
      {"Tanhshrink", [](Site&) { return AnyModule(torch::nn::Tanhshrink()); }},
      {"Softmax",
       [](Site& s) { return softmax_like(s.kw, [](const torch::Tensor& x, int64_t d) { return torch::softmax(x, d); }); }},
      {"LogSoftmax",
       [](Site& s) {
         return softmax_like(s.kw, [](const torch::Tensor& x, int64_t d) { return torch::log_softmax(x, d); });
       }},
      {"Softmin",
       [](Site& s) { return softmax_like(s.kw, [](const torch::Tensor& x, int64_t d) { return torch::softmax(-x, d); }); }},
      {"Identity", [](Site&) { return AnyModule(torch::nn::Identity()); }},
      {"Dice",
       [](Site& s) {
         // tzrec's Dice takes no arguments in the string; its width and rank are the layer's.
         TORCH_CHECK(s.hidden_size > 0, "activation Dice built without the width of its layer");
         return AnyModule(Dice(s.hidden_size, s.dim));
       }},
  };
  return table;
}

std::string supported_names() {
  std::string names;
  for (const auto& [name, builder] : builders()) names += (names.empty() ? "" : ", ") + name;
  return names;
}

}  // namespace

torch::nn::AnyModule create_activation(const std::string& activation, int64_t hidden_size, int64_t dim) {
  const std::string s = trim(activation);
  if (s.empty()) return {};
  const ActivationString parsed = parse_activation_string(s);
  const std::string& class_name = parsed.name;
  if (class_name == "GLU") {
    bad(s, "nn.GLU halves the layer's width, so the next layer's input would not match; use another activation");
  }
  auto it = builders().find(class_name);
  // Dice is tzrec's own class, named without a module path; "nn.Dice" names no torch class.
  const bool misplaced_dice = class_name == "Dice" && s.compare(0, 4, "Dice") != 0;
  if (it == builders().end() || misplaced_dice) {
    bad(s, fmt::format("unknown activation class nn.{} (supported: {})", class_name, supported_names()));
  }
  std::map<std::string, Literal> values;
  for (const auto& [key, raw] : parsed.kwargs) values.emplace(key, parse_literal(s, key, raw));
  Kwargs kw(s, std::move(values));
  Site site{s, kw, hidden_size, dim};
  torch::nn::AnyModule module = it->second(site);
  kw.finish(class_name);
  return module;
}

}  // namespace tzrec::nn
