// The syntax of expr_feature's expressions (docs/tzrec-compatibility.md §5.10, ExprFeature): text
// to a syntax tree, with TorchEasyRec's operators and precedences (those of muParser, which pyfg's
// expressions follow). No torch.
//
// Lowest precedence first:
//   c ? x : y            C-style conditional (right-associative: a ? b : c ? d : e)
//   ||                   logical or   (operands non-zero -> 1, else 0)
//   &&                   logical and
//   |                    bitwise or   (operands truncated to 64-bit integers)
//   &                    bitwise and
//   < <= > >= == !=      comparisons (1 or 0), left-associative, one level
//   + -                  addition, subtraction
//   * /                  multiplication, division
//   unary - +            signs: bind weaker than ^ (-2^2 = -4, as muParser) and stronger than * /
//   ^                    power, right-associative (2^2^3 = 256); its exponent may carry a sign
//                        (2^-1 = 0.5)
// Operands: numbers (12, 1.5, .5, 1e-3), variables (the names of the feature's `variables`),
// the constants _pi and _e, calls f(x, ...) of the functions in expr_functions.h, parentheses.
// Names are [A-Za-z_][A-Za-z0-9_]*; spaces and tabs are ignored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "feature/expr_functions.h"

namespace tzrec::feature {

enum class ExprOp : uint8_t {
  kNeg,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kLt,
  kLe,
  kGt,
  kGe,
  kEq,
  kNe,
  kAnd,
  kOr,
  kBitAnd,
  kBitOr,
};

struct ExprNode {
  enum class Kind : uint8_t { kNumber, kVariable, kUnary, kBinary, kConditional, kCall };
  Kind kind = Kind::kNumber;
  ExprOp op = ExprOp::kAdd;                // kUnary (kNeg), kBinary
  double number = 0;                       // kNumber
  int variable = -1;                       // kVariable: index into the variable names
  const ExprFunction* function = nullptr;  // kCall
  std::vector<int> children;               // indices into ExprAst::nodes, in order
  size_t position = 0;                     // 0-based character where the node starts
};

struct ExprAst {
  std::vector<ExprNode> nodes;
  int root = -1;
};

// A malformed expression: `what()` says what is wrong, `hint()` how to fix it (may be empty);
// `position` is the 0-based character it refers to.
class ExprSyntaxError : public std::runtime_error {
 public:
  ExprSyntaxError(const std::string& message, const std::string& hint, size_t position)
      : std::runtime_error(message), hint_(hint), position_(position) {}
  const std::string& hint() const { return hint_; }
  size_t position() const { return position_; }

 private:
  std::string hint_;
  size_t position_;
};

// Parses `text`; `variables`: the names a variable may have (index = ExprNode::variable).
// ExprSyntaxError for a syntax error, an unknown function or variable, or a call with the wrong
// number of arguments.
ExprAst parse_expr(std::string_view text, const std::vector<std::string>& variables);

}  // namespace tzrec::feature
