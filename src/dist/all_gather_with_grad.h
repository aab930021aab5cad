// A differentiable all-gather (the role of torch.distributed.nn.functional.all_gather, which
// TorchEasyRec's SID contrastive loss uses): every rank's rows of `input`, concatenated in rank
// order (dim-0 sizes may differ), and in backward each rank's gradient for its own rows is the sum
// over the ranks of the gradients of those rows. A collective in forward and in backward: every
// rank calls it, in the same order.
#pragma once

#include <string>

#include <torch/torch.h>

#include "dist/process_group.h"

namespace tzrec::dist {

torch::Tensor all_gather_with_grad(ProcessGroup& pg, const torch::Tensor& input, const std::string& what);

}  // namespace tzrec::dist
