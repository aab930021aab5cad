// raw_feature.normalizer (pyfg syntax "method=...,key=value,..."), applied in FG modes before
// boundaries bucketization:
//   method=log10,threshold=T,default=D   x > T ? log10(x) : D      (T defaults to 1e-10, D to -10)
//   method=zscore,mean=M,standard_deviation=S   (x - M) / S        (M defaults to 0, S to 1)
//   method=minmax,min=A,max=B            (x - A) / (B - A)         (A and B required, B > A)
//   method=expression,expr=E             E evaluated with the variable x (the expr_feature language,
//                                        feature/expr_program.h, e.g. "log(x+3)" or "sign(x)")
// Anything else is a ConfigError naming the field. The expression is everything after "expr="
// (it may hold commas, e.g. "min(x,10)").
#pragma once

#include <memory>
#include <string>

namespace tzrec::feature {

class ExprProgram;  // feature/expr_program.h

class Normalizer {
 public:
  enum class Method { kNone, kLog10, kZScore, kMinMax, kExpression };

  Normalizer() = default;
  // field_path names the config field in errors, e.g. "feature_configs[2].raw_feature.normalizer".
  static Normalizer parse(const std::string& text, const std::string& field_path);

  Method method() const { return method_; }
  // Inline for the common kNone: raw features apply it to every value.
  double apply(double x) const { return method_ == Method::kNone ? x : apply_method(x); }

 private:
  double apply_method(double x) const;

  Method method_ = Method::kNone;
  std::shared_ptr<const ExprProgram> expression_;  // kExpression
  double a_ = 0;  // log10: threshold; zscore: mean; minmax: min
  double b_ = 0;  // log10: default;   zscore: std;  minmax: max - min
};

}  // namespace tzrec::feature
