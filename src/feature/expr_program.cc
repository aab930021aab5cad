#include "feature/expr_program.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace tzrec::feature {

double apply_expr_op(ExprOp op, double a, double b) {
  switch (op) {
    case ExprOp::kAdd:
      return a + b;
    case ExprOp::kSub:
      return a - b;
    case ExprOp::kMul:
      return a * b;
    case ExprOp::kDiv:
      return a / b;
    case ExprOp::kPow:
      return std::pow(a, b);
    case ExprOp::kLt:
      return a < b ? 1.0 : 0.0;
    case ExprOp::kLe:
      return a <= b ? 1.0 : 0.0;
    case ExprOp::kGt:
      return a > b ? 1.0 : 0.0;
    case ExprOp::kGe:
      return a >= b ? 1.0 : 0.0;
    case ExprOp::kEq:
      return a == b ? 1.0 : 0.0;
    case ExprOp::kNe:
      return a != b ? 1.0 : 0.0;
    case ExprOp::kAnd:
      return (a != 0 && b != 0) ? 1.0 : 0.0;
    case ExprOp::kOr:
      return (a != 0 || b != 0) ? 1.0 : 0.0;
    case ExprOp::kBitAnd:
      return static_cast<double>(static_cast<int64_t>(a) & static_cast<int64_t>(b));
    case ExprOp::kBitOr:
      return static_cast<double>(static_cast<int64_t>(a) | static_cast<int64_t>(b));
    case ExprOp::kNeg:
      return -a;
  }
  return 0;
}

ExprProgram::ExprProgram(std::string_view text, const std::vector<std::string>& variables, double fill_missing)
    : used_(variables.size(), false), fill_missing_(fill_missing) {
  const ExprAst ast = parse_expr(text, variables);
  emit(ast, ast.root, 1);
}

// Postfix order: operands first; `depth` is the stack height once this node's value is pushed.
void ExprProgram::emit(const ExprAst& ast, int node, int depth) {
  const ExprNode& n = ast.nodes[static_cast<size_t>(node)];
  max_depth_ = std::max(max_depth_, depth);
  for (size_t i = 0; i < n.children.size(); ++i) emit(ast, n.children[i], depth + static_cast<int>(i));
  Instr in;
  switch (n.kind) {
    case ExprNode::Kind::kNumber:
      in.code = Code::kConst;
      in.value = n.number;
      break;
    case ExprNode::Kind::kVariable:
      in.code = Code::kVar;
      in.var = n.variable;
      used_[static_cast<size_t>(n.variable)] = true;
      break;
    case ExprNode::Kind::kUnary:
      in.code = Code::kNeg;
      break;
    case ExprNode::Kind::kBinary:
      in.code = Code::kBinary;
      in.op = n.op;
      break;
    case ExprNode::Kind::kConditional:
      in.code = Code::kSelect;
      break;
    case ExprNode::Kind::kCall:
      in.function = n.function;
      in.argc = static_cast<int32_t>(n.children.size());
      in.code = n.function->kind == ExprFunctionKind::kRandom ? Code::kRandom : Code::kCall;
      uses_random_ = uses_random_ || in.code == Code::kRandom;
      break;
  }
  code_.push_back(in);
}

void ExprProgram::evaluate(const ExprArg* args, Scratch* scratch, std::vector<double>* out,
                           uint64_t random_state) const {
  bool all_scalar = true;
  for (size_t i = 0; i < used_.size(); ++i) {
    if (used_[i] && args[i].n != 1) all_scalar = false;
  }
  if (all_scalar) {
    const double x = run_scalar(args, scratch, &random_state);
    out->assign(1, x);
    return;
  }
  run_vector(args, scratch, out, &random_state);
}

double ExprProgram::run_scalar(const ExprArg* args, Scratch* s, uint64_t* random_state) const {
  if (s->scalars.size() < static_cast<size_t>(max_depth_)) s->scalars.resize(static_cast<size_t>(max_depth_));
  double* st = s->scalars.data();
  int sp = 0;  // stack height
  for (const Instr& in : code_) {
    switch (in.code) {
      case Code::kConst:
        st[sp++] = in.value;
        break;
      case Code::kVar:
        st[sp++] = args[in.var].values[0];
        break;
      case Code::kNeg:
        st[sp - 1] = -st[sp - 1];
        break;
      case Code::kBinary:
        --sp;
        st[sp - 1] = apply_expr_op(in.op, st[sp - 1], st[sp]);
        break;
      case Code::kSelect:
        sp -= 2;
        st[sp - 1] = st[sp - 1] != 0 ? st[sp] : st[sp + 1];
        break;
      case Code::kRandom:
        st[sp++] = expr_random(random_state);
        break;
      case Code::kCall: {
        const ExprFunction& f = *in.function;
        sp -= in.argc;
        double* a = st + sp;
        double r = 0;
        switch (f.kind) {
          case ExprFunctionKind::kElementwise:
            r = f.scalar(a, in.argc);
            break;
          case ExprFunctionKind::kVector:
            r = f.vector(a, 1);
            break;
          case ExprFunctionKind::kVectorPair:
            r = f.vector_pair(a, a + 1, 1);
            break;
          case ExprFunctionKind::kRandom:
            break;
        }
        st[sp++] = r;
        break;
      }
    }
  }
  return st[0];
}

namespace expr_vm {

using Slot = ExprProgram::Scratch::Slot;

// Element i of a slot: a scalar broadcasts; past a vector's end, `fill`.
inline double element(const Slot& x, size_t i, double fill) {
  if (!x.vector) return x.v[0];
  return i < x.v.size() ? x.v[i] : fill;
}

// The length of an element-wise result over `slots[0, n)` (0: all scalars).
size_t broadcast_length(const Slot* slots, int n) {
  size_t len = 0;
  for (int i = 0; i < n; ++i) {
    if (slots[i].vector) len = std::max(len, slots[i].v.size());
  }
  return len;
}

// Copies a slot's values padded (or broadcast) to `n` into *dst.
void padded(const Slot& x, size_t n, double fill, std::vector<double>* dst) {
  dst->resize(n);
  for (size_t i = 0; i < n; ++i) (*dst)[i] = element(x, i, fill);
}

}  // namespace expr_vm

void ExprProgram::run_vector(const ExprArg* args, Scratch* s, std::vector<double>* out,
                             uint64_t* random_state) const {
  using expr_vm::broadcast_length;
  using expr_vm::element;
  using expr_vm::Slot;
  if (s->slots.size() < static_cast<size_t>(max_depth_)) s->slots.resize(static_cast<size_t>(max_depth_));
  Slot* st = s->slots.data();
  const double fill = fill_missing_;
  int sp = 0;
  auto set_scalar = [](Slot* x, double v) {
    x->v.assign(1, v);
    x->vector = false;
  };
  for (const Instr& in : code_) {
    switch (in.code) {
      case Code::kConst:
        set_scalar(&st[sp++], in.value);
        break;
      case Code::kVar: {
        const ExprArg& a = args[in.var];
        Slot& x = st[sp++];
        x.v.assign(a.values, a.values + a.n);
        x.vector = a.n != 1;
        break;
      }
      case Code::kNeg:
        for (double& v : st[sp - 1].v) v = -v;
        break;
      case Code::kBinary: {
        --sp;
        Slot& a = st[sp - 1];
        const Slot& b = st[sp];
        const size_t n = broadcast_length(&a, 2);
        if (n == 0) {
          a.v[0] = apply_expr_op(in.op, a.v[0], b.v[0]);
          break;
        }
        s->tmp.resize(n);
        for (size_t i = 0; i < n; ++i) s->tmp[i] = apply_expr_op(in.op, element(a, i, fill), element(b, i, fill));
        std::swap(a.v, s->tmp);
        a.vector = true;
        break;
      }
      case Code::kSelect: {
        sp -= 2;
        Slot& c = st[sp - 1];
        const size_t n = broadcast_length(&c, 3);
        if (n == 0) {
          c.v[0] = c.v[0] != 0 ? st[sp].v[0] : st[sp + 1].v[0];
          break;
        }
        s->tmp.resize(n);
        for (size_t i = 0; i < n; ++i) {
          s->tmp[i] = element(c, i, fill) != 0 ? element(st[sp], i, fill) : element(st[sp + 1], i, fill);
        }
        std::swap(c.v, s->tmp);
        c.vector = true;
        break;
      }
      case Code::kRandom:
        set_scalar(&st[sp++], expr_random(random_state));
        break;
      case Code::kCall: {
        const ExprFunction& f = *in.function;
        sp -= in.argc;
        Slot* a = st + sp;
        switch (f.kind) {
          case ExprFunctionKind::kElementwise: {
            const size_t n = broadcast_length(a, in.argc);
            s->args.resize(static_cast<size_t>(in.argc));
            s->tmp.resize(std::max<size_t>(n, 1));
            for (size_t i = 0; i < std::max<size_t>(n, 1); ++i) {
              for (int j = 0; j < in.argc; ++j) s->args[static_cast<size_t>(j)] = element(a[j], i, fill);
              s->tmp[i] = f.scalar(s->args.data(), in.argc);
            }
            std::swap(a[0].v, s->tmp);
            a[0].vector = n > 0;
            break;
          }
          case ExprFunctionKind::kVector:
            set_scalar(&a[0], f.vector(a[0].v.data(), a[0].v.size()));
            break;
          case ExprFunctionKind::kVectorPair: {
            const size_t n = std::max(a[0].v.size(), a[1].v.size());
            expr_vm::padded(a[0], n, fill, &s->pad_a);
            expr_vm::padded(a[1], n, fill, &s->pad_b);
            set_scalar(&a[0], f.vector_pair(s->pad_a.data(), s->pad_b.data(), n));
            break;
          }
          case ExprFunctionKind::kRandom:
            break;
        }
        ++sp;
        break;
      }
    }
  }
  out->assign(st[0].v.begin(), st[0].v.end());
}

}  // namespace tzrec::feature
