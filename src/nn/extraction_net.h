// One extraction network of PLE (tzrec/modules/extraction_net.py; docs/tzrec-compatibility.md §4): per task
// `expert_num_per_task` task experts on that task's input, `share_num` shared experts on the
// shared input; task t's output is a softmax gate (Linear on its input) over its own experts and
// the shared experts; unless this is the last network, the shared output is a softmax gate
// (Linear on the shared input) over all task experts and the shared experts.
//
// Module tree (state-dict names): _shared_layers.<s> (MLP), _shared_gate (Linear, not in the
// last network), _task_layers.<t>.<e> (MLP), _task_gates.<t> (Linear).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "nn/mlp.h"

namespace tzrec::nn {

class ExtractionNetImpl : public torch::nn::Module {
 public:
  // in_task_dims: the input width of each task; in_shared: the shared input width. The task and
  // shared experts must end in the same width (their outputs are mixed by the gates). share_num
  // may be 0 (no shared experts; the shared gate, if any, mixes the task experts). Throws
  // tzrec::ConfigError naming config_path for bad sizes.
  ExtractionNetImpl(const std::vector<int64_t>& in_task_dims, int64_t in_shared, int64_t share_num,
                    int64_t expert_num_per_task, const MLPOptions& share_expert_net,
                    const MLPOptions& task_expert_net, bool final_network, const std::string& config_path);
  // task_inputs: one [B, in_task_dims[t]] per task; shared_input: [B, in_shared]. Returns the
  // task outputs [B, expert width] and the shared output (undefined for the last network).
  std::pair<std::vector<torch::Tensor>, torch::Tensor> forward(const std::vector<torch::Tensor>& task_inputs,
                                                               const torch::Tensor& shared_input);
  int64_t output_dim() const { return output_dim_; }

 private:
  std::vector<MLP> shared_experts_;
  torch::nn::Linear shared_gate_{nullptr};
  std::vector<std::vector<MLP>> task_experts_;
  std::vector<torch::nn::Linear> task_gates_;
  int64_t output_dim_ = 0;
};
TORCH_MODULE(ExtractionNet);

}  // namespace tzrec::nn
