// parse_expr: the tree it builds (precedence and associativity of TorchEasyRec's operator table) and
// its errors — what is wrong, where (0-based character), and how to fix it. The expected trees
// follow the table in expr_parser.h; the error texts are this engine's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "feature/expr_parser.h"

namespace tzrec::feature {
namespace expr_parser_test {

const std::vector<std::string> kVars = {"u_age", "i_age", "x1"};

// The tree as a fully parenthesized string: "(a + (b * c))".
std::string show(const ExprAst& ast, int node) {
  const ExprNode& n = ast.nodes[static_cast<size_t>(node)];
  switch (n.kind) {
    case ExprNode::Kind::kNumber: {
      std::string s = std::to_string(n.number);
      s.erase(s.find_last_not_of('0') + 1);
      if (s.back() == '.') s.pop_back();
      return s;
    }
    case ExprNode::Kind::kVariable:
      return kVars[static_cast<size_t>(n.variable)];
    case ExprNode::Kind::kUnary:
      return "(-" + show(ast, n.children[0]) + ")";
    case ExprNode::Kind::kConditional:
      return "(" + show(ast, n.children[0]) + " ? " + show(ast, n.children[1]) + " : " + show(ast, n.children[2]) + ")";
    case ExprNode::Kind::kCall: {
      std::string s = std::string(n.function->name) + "(";
      for (size_t i = 0; i < n.children.size(); ++i) s += (i ? ", " : "") + show(ast, n.children[i]);
      return s + ")";
    }
    case ExprNode::Kind::kBinary:
      break;
  }
  static const char* kSpell[] = {"-", "+", "-", "*", "/", "^", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "&", "|"};
  return "(" + show(ast, n.children[0]) + " " + kSpell[static_cast<int>(n.op)] + " " + show(ast, n.children[1]) + ")";
}

std::string tree(const std::string& text) {
  const ExprAst ast = parse_expr(text, kVars);
  return show(ast, ast.root);
}

TEST(ExprParser, PrecedenceAndAssociativity) {
  EXPECT_EQ(tree("u_age == i_age ? 1 : 0"), "((u_age == i_age) ? 1 : 0)");
  EXPECT_EQ(tree("1 + 2 * 3 ^ 4"), "(1 + (2 * (3 ^ 4)))");
  EXPECT_EQ(tree("2 ^ 3 ^ 4"), "(2 ^ (3 ^ 4))");
  EXPECT_EQ(tree("-2 ^ 2"), "(-(2 ^ 2))");
  EXPECT_EQ(tree("2 ^ -x1"), "(2 ^ (-x1))");
  EXPECT_EQ(tree("1 - 2 - 3"), "((1 - 2) - 3)");
  EXPECT_EQ(tree("x1 || x1 && x1 | x1 & x1 < x1 + x1 * x1"),
            "(x1 || (x1 && (x1 | (x1 & (x1 < (x1 + (x1 * x1)))))))");
  EXPECT_EQ(tree("1 < 2 <= 3 > 4 >= 5 == 6 != 7"), "((((((1 < 2) <= 3) > 4) >= 5) == 6) != 7)");
  EXPECT_EQ(tree("x1 ? 1 : x1 ? 2 : 3"), "(x1 ? 1 : (x1 ? 2 : 3))");
  EXPECT_EQ(tree("max(u_age, i_age, 3) + dot(x1, x1)"), "(max(u_age, i_age, 3) + dot(x1, x1))");
  EXPECT_EQ(tree("rnd()"), "rnd()");
  EXPECT_EQ(tree("+u_age"), "u_age");
}

struct Failure {
  std::string what, hint;
  size_t position = 0;
};

Failure failure(const std::string& text) {
  try {
    parse_expr(text, kVars);
  } catch (const ExprSyntaxError& e) {
    return Failure{e.what(), e.hint(), e.position()};
  }
  ADD_FAILURE() << "no error for " << text;
  return {};
}

TEST(ExprParser, UnknownNamesSayWhatExists) {
  Failure f = failure("u_age + c");
  EXPECT_EQ(f.what, "unknown variable 'c'");
  EXPECT_EQ(f.hint, "declare it in variables as \"user:c\" or \"item:c\" (declared: u_age, i_age, x1)");
  EXPECT_EQ(f.position, 8u);
  f = failure("foo(u_age)");
  EXPECT_EQ(f.what, "unknown function 'foo'");
  EXPECT_EQ(f.hint.rfind("the functions are rnd, isnan, sin,", 0), 0u) << f.hint;
  EXPECT_EQ(f.position, 0u);
  f = failure("1 + sin");
  EXPECT_EQ(f.what, "function 'sin' is used without arguments");
  EXPECT_EQ(f.position, 4u);
  f = failure("u_age(1)");  // a variable is not a function
  EXPECT_EQ(f.what, "unknown function 'u_age'");
}

TEST(ExprParser, ArgumentCounts) {
  EXPECT_EQ(failure("sin(1, 2)").what, "function 'sin' takes 1 argument, got 2");
  EXPECT_EQ(failure("roundp(1)").what, "function 'roundp' takes 2 arguments, got 1");
  EXPECT_EQ(failure("haversine(1, 2, 3)").what, "function 'haversine' takes 4 arguments, got 3");
  EXPECT_EQ(failure("max()").what, "function 'max' takes at least 1 argument, got 0");
  EXPECT_EQ(failure("rnd(1)").what, "function 'rnd' takes 0 arguments, got 1");
  EXPECT_EQ(failure("dot(x1)").what, "function 'dot' takes 2 arguments, got 1");
}

TEST(ExprParser, SyntaxErrorsPointAtTheCharacter) {
  Failure f = failure("u_age +");
  EXPECT_EQ(f.what, "unexpected end of the expression, expected an operand");
  EXPECT_EQ(f.position, 7u);
  f = failure("(u_age + 1");
  EXPECT_EQ(f.what, "unexpected end of the expression, expected ')'");
  EXPECT_EQ(f.hint, "close the '(' at character 1");
  f = failure("u_age + 1)");
  EXPECT_EQ(f.what, "unmatched ')'");
  EXPECT_EQ(f.position, 9u);
  f = failure("u_age i_age");
  EXPECT_EQ(f.what, "unexpected 'i_age' after a complete operand");
  EXPECT_EQ(f.position, 6u);
  f = failure("u_age = i_age");
  EXPECT_EQ(f.what, "'=' is not an operator");
  EXPECT_EQ(f.hint, "compare with '=='");
  EXPECT_EQ(f.position, 6u);
  EXPECT_EQ(failure("!u_age").what, "'!' is not an operator");
  EXPECT_EQ(failure("7 % 3").hint, "use mod(x, y) for the remainder");
  EXPECT_EQ(failure("u_age ? 1").what, "expected ':' of the conditional 'c ? x : y'");
  EXPECT_EQ(failure("u_age * * 2").what, "expected an operand but found '*'");
  EXPECT_EQ(failure("12abc").what, "'12a' is not a number");
  EXPECT_EQ(failure("1.2.3").what, "'1.2.' is not a number");
  EXPECT_EQ(failure("max(1, 2").what, "unexpected end of the expression, expected ')'");
  EXPECT_EQ(failure("max(1 2)").what, "expected ',' or ')' but found '2'");
  EXPECT_EQ(failure("'a'").what, "strings are not supported");
  f = failure("u_age # 2");
  EXPECT_EQ(f.what, "unexpected character '#'");
  EXPECT_EQ(f.position, 6u);
  EXPECT_EQ(failure("").what, "unexpected end of the expression, expected an operand");
}

}  // namespace expr_parser_test
}  // namespace tzrec::feature
