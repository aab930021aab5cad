// A compiled expr_feature expression (docs/tzrec-compatibility.md §5.10, ExprFeature): the syntax
// tree of expr_parser.h flattened once into postfix instructions, evaluated per row over double
// scalars and vectors. No torch.
//
// Values: a variable holding one value is a scalar, one holding n > 1 values a vector of n.
// Operators and element-wise functions apply element by element: a scalar broadcasts, two vectors
// of different lengths are padded to the longer with `fill_missing` (ExprFeature.fill_missing,
// NaN by default). Vector functions reduce a vector (a scalar is a vector of one) to a scalar.
// Comparisons and logical operators give 1 or 0; && and || treat any non-zero value (NaN too) as
// true, as C; & and | work on the operands truncated to 64-bit integers; division by zero and
// domain errors give IEEE results (inf, NaN). Both branches of ?: are evaluated (no function has
// side effects except rnd).
//
// Evaluation allocates nothing once the scratch has grown to the largest row: rows whose variables
// are all scalars run on a plain double stack; rows with a vector use per-slot buffers that keep
// their capacity.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "feature/expr_functions.h"
#include "feature/expr_parser.h"

namespace tzrec::feature {

// The values of one variable in one row: values[0, n), n >= 1.
struct ExprArg {
  const double* values = nullptr;
  size_t n = 0;
};

class ExprProgram {
 public:
  struct Scratch;

  ExprProgram() = default;
  // Compiles `text` over `variables` (ExprSyntaxError as parse_expr); `fill_missing` pads vectors
  // of different lengths.
  ExprProgram(std::string_view text, const std::vector<std::string>& variables,
              double fill_missing = std::numeric_limits<double>::quiet_NaN());

  // Whether variable i occurs in the expression.
  bool uses(size_t i) const { return used_[i]; }
  bool uses_random() const { return uses_random_; }
  size_t num_variables() const { return used_.size(); }

  // Evaluates the expression for `args` (one per variable; unused ones are not read), writing its
  // value(s) to *out (one for a scalar result). `random_state`: the stream of rnd().
  void evaluate(const ExprArg* args, Scratch* scratch, std::vector<double>* out, uint64_t random_state = 0) const;

 private:
  enum class Code : uint8_t { kConst, kVar, kNeg, kBinary, kSelect, kCall, kRandom };
  struct Instr {
    Code code = Code::kConst;
    ExprOp op = ExprOp::kAdd;                // kBinary
    int32_t argc = 0;                        // kCall
    int32_t var = 0;                         // kVar
    double value = 0;                        // kConst
    const ExprFunction* function = nullptr;  // kCall
  };

  void emit(const ExprAst& ast, int node, int depth);
  double run_scalar(const ExprArg* args, Scratch* s, uint64_t* random_state) const;
  void run_vector(const ExprArg* args, Scratch* s, std::vector<double>* out, uint64_t* random_state) const;

  std::vector<Instr> code_;
  std::vector<bool> used_;
  bool uses_random_ = false;
  int max_depth_ = 0;
  double fill_missing_ = std::numeric_limits<double>::quiet_NaN();
};

// Per-thread evaluation buffers of an ExprProgram (reuse one per parse call).
struct ExprProgram::Scratch {
  struct Slot {
    std::vector<double> v;
    bool vector = false;
  };
  std::vector<double> scalars;  // the scalar stack
  std::vector<Slot> slots;      // the vector stack
  std::vector<double> tmp, args, pad_a, pad_b;
};

// One binary operator on two scalars.
double apply_expr_op(ExprOp op, double a, double b);

}  // namespace tzrec::feature
