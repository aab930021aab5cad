#include "feature/expr_parser.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <utility>

namespace tzrec::feature {
namespace expr_syntax {

enum class Tok : uint8_t { kEnd, kNumber, kName, kOp, kLParen, kRParen, kComma, kQuestion, kColon };

struct Token {
  Tok kind = Tok::kEnd;
  std::string_view text;
  size_t position = 0;
  double number = 0;
  ExprOp op = ExprOp::kAdd;  // kOp
};

// Binary operators, longest spelling first.
struct OpSpelling {
  std::string_view text;
  ExprOp op;
};
constexpr OpSpelling kOps[] = {
    {"<=", ExprOp::kLe}, {">=", ExprOp::kGe},   {"==", ExprOp::kEq},  {"!=", ExprOp::kNe},
    {"&&", ExprOp::kAnd}, {"||", ExprOp::kOr},   {"<", ExprOp::kLt},   {">", ExprOp::kGt},
    {"+", ExprOp::kAdd},  {"-", ExprOp::kSub},   {"*", ExprOp::kMul},  {"/", ExprOp::kDiv},
    {"^", ExprOp::kPow},  {"&", ExprOp::kBitAnd}, {"|", ExprOp::kBitOr},
};

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string function_list() {
  std::string s;
  for (const ExprFunction& f : expr_functions()) {
    if (!s.empty()) s += ", ";
    s += f.name;
  }
  return s;
}

class Parser {
 public:
  Parser(std::string_view text, const std::vector<std::string>& variables) : text_(text), variables_(variables) {
    next();
  }

  ExprAst parse() {
    ast_.root = conditional();
    if (tok_.kind != Tok::kEnd) {
      if (tok_.kind == Tok::kRParen) fail("unmatched ')'", "remove it or add the matching '('");
      fail(fmt::format("unexpected '{}' after a complete operand", tok_.text),
           "join operands with an operator such as + or *");
    }
    return std::move(ast_);
  }

 private:
  [[noreturn]] void fail(const std::string& what, const std::string& hint, size_t position) const {
    throw ExprSyntaxError(what, hint, position);
  }
  [[noreturn]] void fail(const std::string& what, const std::string& hint) const { fail(what, hint, tok_.position); }

  // ---- tokens ----
  void next() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
    tok_ = Token{};
    tok_.position = pos_;
    if (pos_ >= text_.size()) return;
    const char c = text_[pos_];
    if (is_digit(c) || (c == '.' && pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1]))) {
      number_token();
      return;
    }
    if (is_name_start(c)) {
      size_t e = pos_ + 1;
      while (e < text_.size() && is_name_char(text_[e])) ++e;
      take(Tok::kName, e - pos_);
      return;
    }
    switch (c) {
      case '(':
        take(Tok::kLParen, 1);
        return;
      case ')':
        take(Tok::kRParen, 1);
        return;
      case ',':
        take(Tok::kComma, 1);
        return;
      case '?':
        take(Tok::kQuestion, 1);
        return;
      case ':':
        take(Tok::kColon, 1);
        return;
      default:
        break;
    }
    for (const OpSpelling& o : kOps) {
      if (text_.substr(pos_, o.text.size()) == o.text) {
        tok_.op = o.op;
        take(Tok::kOp, o.text.size());
        return;
      }
    }
    if (c == '=') fail("'=' is not an operator", "compare with '=='", pos_);
    if (c == '!') fail("'!' is not an operator", "use '!=' to compare, or '== 0' to negate", pos_);
    if (c == '%') fail("'%' is not an operator", "use mod(x, y) for the remainder", pos_);
    if (c == '"' || c == '\'') fail("strings are not supported", "expressions compute with numbers only", pos_);
    fail(fmt::format("unexpected character '{}'", c),
         "expressions use numbers, variable names, functions, ( ) , ? : and the operators + - * / ^ < <= > >= == != "
         "& | && ||",
         pos_);
  }

  void take(Tok kind, size_t n) {
    tok_.kind = kind;
    tok_.text = text_.substr(pos_, n);
    pos_ += n;
  }

  void number_token() {
    size_t e = pos_;
    while (e < text_.size() && is_digit(text_[e])) ++e;
    if (e < text_.size() && text_[e] == '.') {
      ++e;
      while (e < text_.size() && is_digit(text_[e])) ++e;
    }
    if (e < text_.size() && (text_[e] == 'e' || text_[e] == 'E')) {
      size_t x = e + 1;
      if (x < text_.size() && (text_[x] == '+' || text_[x] == '-')) ++x;
      if (x < text_.size() && is_digit(text_[x])) {
        while (x < text_.size() && is_digit(text_[x])) ++x;
        e = x;
      }
    }
    const auto r = std::from_chars(text_.data() + pos_, text_.data() + e, tok_.number);
    if (r.ec != std::errc() || r.ptr != text_.data() + e) {
      fail(fmt::format("'{}' is not a number", text_.substr(pos_, e - pos_)), "write numbers as 12, 1.5 or 1e-3", pos_);
    }
    take(Tok::kNumber, e - pos_);
    if (tok_.kind == Tok::kNumber && pos_ < text_.size() && (is_name_char(text_[pos_]) || text_[pos_] == '.')) {
      fail(fmt::format("'{}' is not a number", text_.substr(tok_.position, pos_ + 1 - tok_.position)),
           "write numbers as 12, 1.5 or 1e-3, and put an operator between a number and a name", tok_.position);
    }
  }

  // ---- tree ----
  int add(ExprNode n) {
    ast_.nodes.push_back(std::move(n));
    return static_cast<int>(ast_.nodes.size()) - 1;
  }
  int binary(ExprOp op, int a, int b, size_t position) {
    ExprNode n;
    n.kind = ExprNode::Kind::kBinary;
    n.op = op;
    n.children = {a, b};
    n.position = position;
    return add(std::move(n));
  }
  bool at_op(std::initializer_list<ExprOp> ops) const {
    if (tok_.kind != Tok::kOp) return false;
    for (ExprOp o : ops) {
      if (tok_.op == o) return true;
    }
    return false;
  }

  // ---- grammar, lowest precedence first ----
  int conditional() {
    const int c = logical_or();
    if (tok_.kind != Tok::kQuestion) return c;
    const size_t q = tok_.position;
    next();
    const int x = conditional();
    if (tok_.kind != Tok::kColon) fail("expected ':' of the conditional 'c ? x : y'", "add the ': y' part");
    next();
    const int y = conditional();
    ExprNode n;
    n.kind = ExprNode::Kind::kConditional;
    n.children = {c, x, y};
    n.position = q;
    return add(std::move(n));
  }

  template <typename Next>
  int left_assoc(std::initializer_list<ExprOp> ops, Next next_level) {
    int a = (this->*next_level)();
    while (at_op(ops)) {
      const ExprOp op = tok_.op;
      const size_t p = tok_.position;
      next();
      a = binary(op, a, (this->*next_level)(), p);
    }
    return a;
  }
  int logical_or() { return left_assoc({ExprOp::kOr}, &Parser::logical_and); }
  int logical_and() { return left_assoc({ExprOp::kAnd}, &Parser::bit_or); }
  int bit_or() { return left_assoc({ExprOp::kBitOr}, &Parser::bit_and); }
  int bit_and() { return left_assoc({ExprOp::kBitAnd}, &Parser::comparison); }
  int comparison() {
    return left_assoc({ExprOp::kLt, ExprOp::kLe, ExprOp::kGt, ExprOp::kGe, ExprOp::kEq, ExprOp::kNe},
                      &Parser::additive);
  }
  int additive() { return left_assoc({ExprOp::kAdd, ExprOp::kSub}, &Parser::multiplicative); }
  int multiplicative() { return left_assoc({ExprOp::kMul, ExprOp::kDiv}, &Parser::sign); }

  // Signs bind weaker than ^: -2^2 = -(2^2).
  int sign() {
    if (at_op({ExprOp::kSub, ExprOp::kAdd})) {
      const bool minus = tok_.op == ExprOp::kSub;
      const size_t p = tok_.position;
      next();
      const int x = sign();
      if (!minus) return x;
      ExprNode n;
      n.kind = ExprNode::Kind::kUnary;
      n.op = ExprOp::kNeg;
      n.children = {x};
      n.position = p;
      return add(std::move(n));
    }
    return power();
  }

  // Right-associative; the exponent may carry a sign (2^-1: through sign(), which ends in power()).
  int power() {
    const int base = operand();
    if (!at_op({ExprOp::kPow})) return base;
    const size_t p = tok_.position;
    next();
    return binary(ExprOp::kPow, base, sign(), p);
  }
  int operand() {
    const Token t = tok_;
    switch (t.kind) {
      case Tok::kNumber: {
        next();
        ExprNode n;
        n.kind = ExprNode::Kind::kNumber;
        n.number = t.number;
        n.position = t.position;
        return add(std::move(n));
      }
      case Tok::kLParen: {
        next();
        const int x = conditional();
        if (tok_.kind != Tok::kRParen) {
          fail(tok_.kind == Tok::kEnd ? std::string("unexpected end of the expression, expected ')'")
                                      : fmt::format("expected ')' but found '{}'", tok_.text),
               fmt::format("close the '(' at character {}", t.position + 1));
        }
        next();
        return x;
      }
      case Tok::kName:
        next();
        return name(t);
      case Tok::kEnd:
        fail("unexpected end of the expression, expected an operand",
             "complete it with a number, a variable or a function call");
      default:
        fail(fmt::format("expected an operand but found '{}'", t.text),
             "an operator needs a number, a variable, a function call or a '(' on each side");
    }
  }

  int name(const Token& t) {
    if (tok_.kind == Tok::kLParen) return call(t);
    for (size_t i = 0; i < variables_.size(); ++i) {
      if (variables_[i] == t.text) {
        ExprNode n;
        n.kind = ExprNode::Kind::kVariable;
        n.variable = static_cast<int>(i);
        n.position = t.position;
        return add(std::move(n));
      }
    }
    ExprNode n;
    if (find_expr_constant(t.text, &n.number)) {
      n.kind = ExprNode::Kind::kNumber;
      n.position = t.position;
      return add(std::move(n));
    }
    if (find_expr_function(t.text) != nullptr) {
      fail(fmt::format("function '{}' is used without arguments", t.text),
           fmt::format("call it as {}(...)", t.text), t.position);
    }
    std::string declared;
    for (const auto& v : variables_) declared += (declared.empty() ? "" : ", ") + v;
    fail(fmt::format("unknown variable '{}'", t.text),
         fmt::format("declare it in variables as \"user:{}\" or \"item:{}\" (declared: {})", t.text, t.text,
                     declared.empty() ? "none" : declared),
         t.position);
  }

  int call(const Token& t) {
    const ExprFunction* f = find_expr_function(t.text);
    if (f == nullptr) {
      fail(fmt::format("unknown function '{}'", t.text), "the functions are " + function_list(), t.position);
    }
    next();  // '('
    ExprNode n;
    n.kind = ExprNode::Kind::kCall;
    n.function = f;
    n.position = t.position;
    if (tok_.kind != Tok::kRParen) {
      while (true) {
        n.children.push_back(conditional());
        if (tok_.kind != Tok::kComma) break;
        next();
      }
    }
    if (tok_.kind != Tok::kRParen) {
      fail(tok_.kind == Tok::kEnd ? std::string("unexpected end of the expression, expected ')'")
                                  : fmt::format("expected ',' or ')' but found '{}'", tok_.text),
           fmt::format("close the call of {} that starts at character {}", t.text, t.position + 1));
    }
    next();
    const int argc = static_cast<int>(n.children.size());
    if (argc < f->min_args || (f->max_args >= 0 && argc > f->max_args)) {
      const std::string want = f->max_args < 0 ? fmt::format("at least {}", f->min_args)
                               : f->min_args == f->max_args ? std::to_string(f->min_args)
                                                            : fmt::format("{} to {}", f->min_args, f->max_args);
      fail(fmt::format("function '{}' takes {} argument{}, got {}", t.text, want,
                       f->max_args == 1 || (f->max_args < 0 && f->min_args == 1) ? "" : "s", argc),
           "", t.position);
    }
    return add(std::move(n));
  }

  std::string_view text_;
  const std::vector<std::string>& variables_;
  size_t pos_ = 0;
  Token tok_;
  ExprAst ast_;
};

}  // namespace expr_syntax

ExprAst parse_expr(std::string_view text, const std::vector<std::string>& variables) {
  return expr_syntax::Parser(text, variables).parse();
}

}  // namespace tzrec::feature
