#include "feature/normalizer.h"

#include <cmath>
#include <cstdlib>
#include <map>

#include "base/error.h"
#include "base/text.h"
#include "feature/expr_program.h"

namespace tzrec::feature {

Normalizer Normalizer::parse(const std::string& text, const std::string& field_path) {
  // method=expression: the expression runs to the end of the text (it may hold commas).
  if (const size_t at = text.find("expr="); at != std::string::npos) {
    const std::string head = trim(text.substr(0, at));
    if (head != "method=expression," && head != "method=expression ,") {
      throw ConfigError(fmt::format("{}: normalizer '{}': expr= goes with method=expression, written as "
                                    "\"method=expression,expr=<expression of x>\"",
                                    field_path, text));
    }
    const std::string expr = trim(text.substr(at + 5));
    Normalizer n;
    n.method_ = Method::kExpression;
    try {
      n.expression_ = std::make_shared<const ExprProgram>(expr, std::vector<std::string>{"x"});
    } catch (const ExprSyntaxError& e) {
      throw ConfigError(fmt::format("{}: normalizer expression {} at character {} of \"{}\"{}", field_path, e.what(),
                                    e.position() + 1, expr, e.hint().empty() ? "" : "; " + e.hint()));
    }
    return n;
  }
  std::map<std::string, std::string> kv;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = trim(text.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos) {
      throw ConfigError(
          fmt::format("{}: '{}' is not key=value (normalizer '{}')", field_path, item, text));
    }
    kv[trim(item.substr(0, eq))] = trim(item.substr(eq + 1));
  }
  Normalizer n;
  if (kv.empty()) return n;
  auto number = [&](const std::string& key, double fallback, bool required) {
    auto it = kv.find(key);
    if (it == kv.end()) {
      if (required) {
        throw ConfigError(
            fmt::format("{}: normalizer '{}' needs {}=<number>", field_path, text, key));
      }
      return fallback;
    }
    char* end = nullptr;
    const double v = std::strtod(it->second.c_str(), &end);
    if (it->second.empty() || end == nullptr || *end != '\0' || std::isnan(v)) {
      throw ConfigError(
          fmt::format("{}: normalizer {}={} is not a number", field_path, key, it->second));
    }
    kv.erase(it);
    return v;
  };
  auto mit = kv.find("method");
  if (mit == kv.end()) {
    throw ConfigError(fmt::format("{}: normalizer '{}' has no method= (log10 | zscore | minmax)",
                                  field_path, text));
  }
  const std::string method = mit->second;
  kv.erase(mit);
  if (method == "log10") {
    n.method_ = Method::kLog10;
    n.a_ = number("threshold", 1e-10, false);
    n.b_ = number("default", -10.0, false);
  } else if (method == "zscore") {
    n.method_ = Method::kZScore;
    n.a_ = number("mean", 0.0, false);
    n.b_ = number("standard_deviation", 1.0, false);
    if (n.b_ == 0.0) {
      throw ConfigError(fmt::format("{}: zscore standard_deviation must not be 0", field_path));
    }
  } else if (method == "minmax") {
    n.method_ = Method::kMinMax;
    const double lo = number("min", 0.0, true);
    const double hi = number("max", 0.0, true);
    if (!(hi > lo)) {
      throw ConfigError(
          fmt::format("{}: minmax needs max > min, got min={} max={}", field_path, lo, hi));
    }
    n.a_ = lo;
    n.b_ = hi - lo;
  } else if (method == "expression") {
    throw ConfigError(fmt::format("{}: normalizer '{}' needs expr=<expression of x>, e.g. "
                                  "\"method=expression,expr=log(x+3)\"",
                                  field_path, text));
  } else {
    throw ConfigError(fmt::format("{}: unknown normalizer method '{}'; use log10, zscore, minmax or expression",
                                  field_path, method));
  }
  if (!kv.empty()) {
    throw ConfigError(fmt::format("{}: unknown normalizer key '{}' for method={}", field_path,
                                  kv.begin()->first, method));
  }
  return n;
}

double Normalizer::apply_method(double x) const {
  switch (method_) {
    case Method::kNone:
      return x;
    case Method::kLog10:
      return x > a_ ? std::log10(x) : b_;
    case Method::kZScore:
      return (x - a_) / b_;
    case Method::kMinMax:
      return (x - a_) / b_;
    case Method::kExpression: {
      // One scratch per loader thread: features parse batches on several threads at once.
      thread_local ExprProgram::Scratch scratch;
      thread_local std::vector<double> out;
      const ExprArg arg{&x, 1};
      expression_->evaluate(&arg, &scratch, &out);
      return out.empty() ? x : out[0];
    }
  }
  return x;
}

}  // namespace tzrec::feature
