// raw_feature.normalizer (pyfg syntax "method=...,key=value,..."), applied in FG modes before
// boundaries bucketization:
//   method=log10,threshold=T,default=D   x > T ? log10(x) : D      (T defaults to 1e-10, D to -10)
//   method=zscore,mean=M,standard_deviation=S   (x - M) / S        (M defaults to 0, S to 1)
//   method=minmax,min=A,max=B            (x - A) / (B - A)         (A and B required, B > A)
// method=expression is not supported (NotSupportedError); anything else is a ConfigError.
#pragma once

#include <string>

namespace tzrec::feature {

class Normalizer {
 public:
  enum class Method { kNone, kLog10, kZScore, kMinMax };

  Normalizer() = default;
  // field_path names the config field in errors, e.g. "feature_configs[2].raw_feature.normalizer".
  static Normalizer parse(const std::string& text, const std::string& field_path);

  Method method() const { return method_; }
  double apply(double x) const;

 private:
  Method method_ = Method::kNone;
  double a_ = 0;  // log10: threshold; zscore: mean; minmax: min
  double b_ = 0;  // log10: default;   zscore: std;  minmax: max - min
};

}  // namespace tzrec::feature
