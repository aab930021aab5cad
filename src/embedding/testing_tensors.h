// Small tensor helpers of the embedding tests (header-only, tests only).
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

namespace tzrec::embedding::testing {

// An int64 tensor of `v`.
inline torch::Tensor i64(const std::vector<int64_t>& v) { return torch::tensor(v, torch::kInt64); }

// The values of a tensor as int64, in order.
inline std::vector<int64_t> vec(const torch::Tensor& t) {
  const torch::Tensor c = t.contiguous().to(torch::kInt64);
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

}  // namespace tzrec::embedding::testing
