#include "embedding/zch_threshold_filter.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::embedding {
namespace {

constexpr const char* kAcceptedForms =
    "accepted: 'lambda x: (x > N, N)', 'lambda x: (x >= N, N)', "
    "'lambda x: dynamic_threshold_filter(x[, m])', 'lambda x: average_threshold_filter(x)', "
    "'lambda x: probabilistic_threshold_filter(x[, p])', one of those three function names "
    "alone, or 'partial(<function>[, m])'";

struct FilterToken {
  enum Type { kName, kNumber, kPunct, kEnd } type = kEnd;
  std::string text;
  size_t pos = 0;
};

// Tokens of the expression: identifiers, unsigned number literals, and the punctuation
// ( ) , : = > >= + -. Anything else is a parse error.
class FilterTokenizer {
 public:
  explicit FilterTokenizer(const std::string& text) : text_(text) {}

  // Returns false (with `why`) on a character no token starts with.
  bool run(std::vector<FilterToken>* out, std::string* why) {
    size_t i = 0;
    while (i < text_.size()) {
      const char c = text_[i];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
        continue;
      }
      FilterToken t;
      t.pos = i;
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t j = i;
        while (j < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[j])) || text_[j] == '_')) {
          ++j;
        }
        t.type = FilterToken::kName;
        t.text = text_.substr(i, j - i);
        i = j;
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '.' && i + 1 < text_.size() &&
                  std::isdigit(static_cast<unsigned char>(text_[i + 1])))) {
        size_t j = i;
        while (j < text_.size() && std::isdigit(static_cast<unsigned char>(text_[j]))) ++j;
        if (j < text_.size() && text_[j] == '.') {
          ++j;
          while (j < text_.size() && std::isdigit(static_cast<unsigned char>(text_[j]))) ++j;
        }
        if (j < text_.size() && (text_[j] == 'e' || text_[j] == 'E')) {
          size_t k = j + 1;
          if (k < text_.size() && (text_[k] == '+' || text_[k] == '-')) ++k;
          if (k < text_.size() && std::isdigit(static_cast<unsigned char>(text_[k]))) {
            while (k < text_.size() && std::isdigit(static_cast<unsigned char>(text_[k]))) ++k;
            j = k;
          }
        }
        t.type = FilterToken::kNumber;
        t.text = text_.substr(i, j - i);
        i = j;
      } else if (c == '>' && i + 1 < text_.size() && text_[i + 1] == '=') {
        t.type = FilterToken::kPunct;
        t.text = ">=";
        i += 2;
      } else if (std::string("(),:=>+-").find(c) != std::string::npos) {
        t.type = FilterToken::kPunct;
        t.text = std::string(1, c);
        ++i;
      } else {
        *why = fmt::format("unexpected character '{}' at offset {}", c, i);
        return false;
      }
      out->push_back(t);
    }
    FilterToken end;
    end.pos = text_.size();
    out->push_back(end);
    return true;
  }

 private:
  const std::string& text_;
};

struct FilterNumber {
  double value = 0.0;
  bool is_int = false;
  int64_t int_value = 0;
};

// Recursive-descent parser over the tokens; every failure throws the ConfigError of parse().
class FilterParser {
 public:
  FilterParser(const std::string& text, const std::string& field_path)
      : text_(text), field_path_(field_path) {
    std::string why;
    if (!FilterTokenizer(text_).run(&tokens_, &why)) fail(why);
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw ConfigError(fmt::format("{}: cannot parse threshold_filtering_func '{}' ({}); {}",
                                  field_path_, text_, why, kAcceptedForms));
  }

  const FilterToken& peek() const { return tokens_[pos_]; }
  FilterToken next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  bool at_punct(const char* p) const {
    return peek().type == FilterToken::kPunct && peek().text == p;
  }
  void expect_punct(const char* p) {
    if (!at_punct(p)) fail(fmt::format("expected '{}' at {}", p, where()));
    ++pos_;
  }
  std::string expect_name() {
    if (peek().type != FilterToken::kName) fail(fmt::format("expected a name at {}", where()));
    return next().text;
  }
  void expect_end() {
    if (peek().type != FilterToken::kEnd) fail(fmt::format("unexpected {}", where()));
  }
  std::string where() const {
    if (peek().type == FilterToken::kEnd) return "the end";
    return fmt::format("'{}' (offset {})", peek().text, peek().pos);
  }

  // [+|-] literal
  FilterNumber number() {
    bool negative = false;
    while (at_punct("+") || at_punct("-")) {
      if (next().text == "-") negative = !negative;
    }
    if (peek().type != FilterToken::kNumber) fail(fmt::format("expected a number at {}", where()));
    const std::string lit = next().text;
    FilterNumber n;
    n.is_int = lit.find_first_of(".eE") == std::string::npos;
    errno = 0;
    if (n.is_int) {
      char* end = nullptr;
      const long long v = std::strtoll(lit.c_str(), &end, 10);
      if (errno == ERANGE || *end != '\0') fail(fmt::format("integer '{}' out of range", lit));
      n.int_value = negative ? -v : v;
      n.value = static_cast<double>(n.int_value);
    } else {
      char* end = nullptr;
      const double v = std::strtod(lit.c_str(), &end);
      if (*end != '\0' || !std::isfinite(v)) fail(fmt::format("bad number '{}'", lit));
      n.value = negative ? -v : v;
    }
    return n;
  }

  bool done() const { return peek().type == FilterToken::kEnd; }

 private:
  size_t pos_ = 0;
  const std::string& text_;
  const std::string& field_path_;
  std::vector<FilterToken> tokens_;
};

bool is_builtin(const std::string& name) {
  return name == "dynamic_threshold_filter" || name == "average_threshold_filter" ||
         name == "probabilistic_threshold_filter";
}

}  // namespace

ZchThresholdFilter ZchThresholdFilter::parse(const std::string& text,
                                             const std::string& field_path) {
  FilterParser p(text, field_path);
  ZchThresholdFilter f;
  f.text_ = text;

  auto set_builtin = [&](const std::string& fn) {
    if (fn == "dynamic_threshold_filter") {
      f.kind_ = Kind::kDynamic;
      f.parameter_ = 10.0;  // TorchRec's default threshold_skew_multiplier
    } else if (fn == "average_threshold_filter") {
      f.kind_ = Kind::kAverage;
    } else {
      f.kind_ = Kind::kProbabilistic;
      f.parameter_ = 0.01;  // TorchRec's default per_id_probability
    }
  };
  // After "<function>(": the lambda's variable (inside a lambda), the optional extra argument,
  // positional or keyword, then ')'.
  auto builtin_args = [&](const std::string& fn, const std::string* param) {
    set_builtin(fn);
    if (param != nullptr) {
      const std::string arg = p.expect_name();
      if (arg != *param) {
        p.fail(
            fmt::format("the first argument of {} must be the lambda's variable '{}'", fn, *param));
      }
    }
    if (p.at_punct(")")) {
      p.next();
      return;
    }
    p.expect_punct(",");
    if (f.kind_ == Kind::kAverage) p.fail("average_threshold_filter takes no other argument");
    const std::string kw =
        f.kind_ == Kind::kDynamic ? "threshold_skew_multiplier" : "per_id_probability";
    if (p.peek().type == FilterToken::kName) {
      const std::string name = p.expect_name();
      if (name != kw) p.fail(fmt::format("{} has no argument '{}' (only '{}')", fn, name, kw));
      p.expect_punct("=");
    }
    f.parameter_ = p.number().value;
    p.expect_punct(")");
  };

  if (p.done()) p.fail("empty");
  const std::string head = p.expect_name();
  if (head == "lambda") {
    const std::string param = p.expect_name();
    p.expect_punct(":");
    if (p.at_punct("(")) {
      p.next();
      const std::string lhs = p.expect_name();
      if (lhs != param) p.fail(fmt::format("expected the lambda's variable '{}'", param));
      if (p.at_punct(">")) {
        f.kind_ = Kind::kGreater;
      } else if (p.at_punct(">=")) {
        f.kind_ = Kind::kGreaterEqual;
      } else {
        p.fail(fmt::format("expected '>' or '>=' at {}", p.where()));
      }
      p.next();
      const FilterNumber n = p.number();
      f.parameter_ = n.value;
      f.parameter_is_int_ = n.is_int;
      f.int_parameter_ = n.int_value;
      p.expect_punct(",");
      f.reported_threshold_ = p.number().value;
      p.expect_punct(")");
    } else {
      const std::string fn = p.expect_name();
      if (!is_builtin(fn)) p.fail(fmt::format("unknown function '{}'", fn));
      p.expect_punct("(");
      builtin_args(fn, &param);
    }
  } else if (head == "partial") {
    p.expect_punct("(");
    const std::string fn = p.expect_name();
    if (!is_builtin(fn)) p.fail(fmt::format("unknown function '{}'", fn));
    builtin_args(fn, nullptr);
  } else if (is_builtin(head)) {
    set_builtin(head);  // the function itself: its default arguments
  } else {
    p.fail(fmt::format("unknown name '{}'", head));
  }
  p.expect_end();
  return f;
}

ZchThresholdFilter::Result ZchThresholdFilter::apply(const torch::Tensor& counts,
                                                     std::optional<at::Generator> generator) const {
  TORCH_CHECK(counts.dim() == 1 && counts.scalar_type() == torch::kInt64,
              "ZchThresholdFilter: counts must be [U] int64");
  torch::NoGradGuard no_grad;
  const auto f32 = counts.options().dtype(torch::kFloat32);
  Result r;
  switch (kind_) {
    case Kind::kGreater:
    case Kind::kGreaterEqual: {
      // As torch: an int literal compares in int64, a float literal in float32.
      const at::Scalar n = parameter_is_int_ ? at::Scalar(int_parameter_) : at::Scalar(parameter_);
      r.mask = kind_ == Kind::kGreater ? counts.gt(n) : counts.ge(n);
      r.threshold = torch::full({}, reported_threshold_, f32);
      break;
    }
    case Kind::kDynamic: {
      const int64_t num_ids = counts.numel();
      if (num_ids == 0) {  // TorchRec divides by zero here; nothing to admit
        r.mask = torch::zeros({0}, counts.options().dtype(torch::kBool));
        r.threshold = torch::zeros({}, f32);
        break;
      }
      // Python: threshold = (1 / U * m) * counts.sum() — an int64 tensor times a Python float is a
      // float32 tensor computed in float32.
      const double mass = 1.0 / static_cast<double>(num_ids) * parameter_;
      r.threshold = counts.sum().mul(at::Scalar(mass));
      r.mask = counts.gt(r.threshold);
      break;
    }
    case Kind::kAverage: {
      const torch::Tensor c = counts.to(torch::kFloat32);
      r.threshold = c.mean();
      r.mask = c.gt(r.threshold);
      break;
    }
    case Kind::kProbabilistic: {
      const torch::Tensor probability = torch::full_like(counts, 1.0 - parameter_, f32);
      const torch::Tensor scores = 1 - torch::pow(probability, counts);
      r.threshold =
          generator ? at::rand(counts.sizes(), *generator, f32) : at::rand(counts.sizes(), f32);
      r.mask = scores.gt(r.threshold);
      break;
    }
  }
  return r;
}

}  // namespace tzrec::embedding
