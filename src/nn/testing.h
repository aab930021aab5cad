// Helpers for the nn/ unit tests only (header-only; not used by the library).
#pragma once

#include <string>
#include <vector>

#include <torch/torch.h>

namespace tzrec::nn::testing {

// The keys of a module's named_parameters() / named_buffers(), in order.
inline std::vector<std::string> names(const torch::OrderedDict<std::string, torch::Tensor>& d) {
  std::vector<std::string> out;
  for (const auto& item : d) out.push_back(item.key());
  return out;
}

}  // namespace tzrec::nn::testing
