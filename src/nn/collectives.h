// The collectives a dense module needs when it runs on several ranks (nn sits below dist/: the
// model, which holds the process group, fills them in). A default Collectives is one process.
#pragma once

#include <functional>

#include <torch/torch.h>

namespace tzrec::nn {

struct Collectives {
  int world_size = 1;
  int rank = 0;
  // In place: the element-wise sum over the ranks (every rank calls it with the same shape).
  std::function<void(torch::Tensor&)> all_reduce_sum;
  // In place: rank `root`'s tensor on every rank.
  std::function<void(torch::Tensor&, int root)> broadcast;

  bool distributed() const { return world_size > 1; }
};

}  // namespace tzrec::nn
