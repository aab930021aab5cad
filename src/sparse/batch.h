// One training/eval batch after feature generation (data group __BASE__ only in this build).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <torch/torch.h>

#include "sparse/keyed_jagged_tensor.h"
#include "sparse/keyed_tensor.h"

namespace tzrec::sparse {

struct Batch {
  int64_t batch_size = 0;
  KeyedJaggedTensor sparse_features;               // sparse features, keys = feature names
  KeyedTensor dense_features;                      // dense features [B, value_dim] per feature
  std::map<std::string, torch::Tensor> labels;     // [B] float32 (int columns become float32 too)
  std::map<std::string, torch::Tensor> sample_weights;  // [B] float32

  Batch to(const torch::Device& device) const;
};

}  // namespace tzrec::sparse
