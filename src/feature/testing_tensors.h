// Test-only helpers for feature/ unit tests: tensor contents as vectors, expected-error capture.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tzrec::feature::testing {

using Ids = std::vector<int64_t>;
using Floats = std::vector<float>;

inline Ids ids_of(const torch::Tensor& t) {
  auto c = t.contiguous();
  return Ids(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

inline Floats floats_of(const torch::Tensor& t) {
  auto c = t.contiguous();
  return Floats(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

// The message of the E that f() throws, or a marker string when it throws nothing of type E.
template <typename E, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "<no error of the expected type>";
}

}  // namespace tzrec::feature::testing
