// Variable-length rows of one feature: values [sum(L)], lengths [B], optional weights [sum(L)].
#pragma once

#include <torch/torch.h>

namespace tzrec::sparse {

struct JaggedTensor {
  torch::Tensor values;   // [sum(L)] int64 ids (or float)
  torch::Tensor lengths;  // [B] int64
  torch::Tensor weights;  // [sum(L)] float32, undefined when unweighted

  // offsets: [B + 1] int64, exclusive prefix sum of lengths.
  torch::Tensor offsets() const;
};

}  // namespace tzrec::sparse
