// Admission filters of zero-collision hashing (ZeroCollisionHash.threshold_filtering_func,
// docs/tzrec-compatibility.md §5.12). TorchEasyRec evaluates the string as Python; here it is
// parsed as a small expression language covering the documented forms, and anything else is
// refused with a ConfigError naming the string and the accepted forms.
//
// Accepted (spaces anywhere between tokens; X any identifier; N, M, P Python int / float literals):
//   lambda X: (X > N, M)                       mask = counts > N (N an int: int64 comparison; a
//   lambda X: (X >= N, M)                        float: float32 comparison, as torch); threshold M
//   lambda X: dynamic_threshold_filter(X[, M])            (also threshold_skew_multiplier=M)
//   lambda X: average_threshold_filter(X)
//   lambda X: probabilistic_threshold_filter(X[, P])      (also per_id_probability=P)
//   dynamic_threshold_filter | average_threshold_filter | probabilistic_threshold_filter
//                                                         (the function itself, default arguments)
//   partial(<one of the three>[, M | name=M])             (functools.partial, as tzrec's tests use)
//
// The built-in filters follow TorchRec's torchrec/modules/mc_modules.py, on counts [U] int64 (the
// occurrences of each distinct id of the last eviction_interval steps):
//   dynamic_threshold_filter(c, m = 10.0):  t = float32(sum(c)) * float32(m / U);  mask = c > t
//   average_threshold_filter(c):            t = mean(float32(c));                 mask = c > t
//   probabilistic_threshold_filter(c, p = 0.01):
//       score = 1 - float32(1 - p)^c;  t = torch.rand(U) (per id);                mask = score > t
// The mask selects the ids admitted to eviction scoring (matched ids outside the mask are not
// counted either). The threshold is informational, as in TorchRec.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <torch/torch.h>

namespace tzrec::embedding {

class ZchThresholdFilter {
 public:
  enum class Kind { kGreater, kGreaterEqual, kDynamic, kAverage, kProbabilistic };

  // Parses `text`. Throws ConfigError "<field_path>: cannot parse threshold_filtering_func '<text>'
  // (<why>); accepted: ..." for anything outside the forms above.
  static ZchThresholdFilter parse(const std::string& text,
                                  const std::string& field_path = "zch.threshold_filtering_func");

  struct Result {
    torch::Tensor mask;       // [U] bool: ids that pass
    torch::Tensor threshold;  // 0-dim float32 (lambda form: the literal M; probabilistic: [U])
  };

  // counts: [U] int64 on any device. `generator` is used by the probabilistic filter only; when
  // absent, torch's default generator (as TorchRec, which calls torch.rand).
  Result apply(const torch::Tensor& counts,
               std::optional<at::Generator> generator = std::nullopt) const;

  Kind kind() const { return kind_; }
  // The comparison literal N (kGreater / kGreaterEqual), the multiplier m (kDynamic) or the
  // probability p (kProbabilistic).
  double parameter() const { return parameter_; }
  // The reported threshold M of the lambda form.
  double reported_threshold() const { return reported_threshold_; }
  const std::string& text() const { return text_; }

 private:
  Kind kind_ = Kind::kAverage;
  double parameter_ = 0.0;
  bool parameter_is_int_ = false;  // N written as an int literal: compared in int64
  int64_t int_parameter_ = 0;
  double reported_threshold_ = 0.0;
  std::string text_;
};

}  // namespace tzrec::embedding
