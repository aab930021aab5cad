// FeatureWeight: a module holding one parameter, "weight". The dense embeddings keep one such
// module per feature and parameter kind, so that their state-dict keys are TorchEasyRec's split
// keys "<prefix>meta_emb_<feature>.weight", "<prefix>proj_w_<feature>.weight", ...
// (docs/tzrec-compatibility.md §5.11). libtorch parameter names cannot contain a dot, module names
// can be joined with one: the key is the module name "meta_emb_<feature>" plus "weight".
#pragma once

#include <vector>

#include <torch/torch.h>

namespace tzrec::embedding {

class FeatureWeightImpl : public torch::nn::Module {
 public:
  // `init`: the initial values, any shape; registered as the trainable parameter "weight".
  explicit FeatureWeightImpl(torch::Tensor init) : weight(register_parameter("weight", std::move(init))) {}
  torch::Tensor weight;
};
TORCH_MODULE(FeatureWeight);

// The weights of one parameter kind of N features, stacked: [N, ...] (what the forward computes on;
// the gradient flows back to each feature's weight).
inline torch::Tensor stack_weights(const std::vector<FeatureWeight>& modules) {
  std::vector<torch::Tensor> weights;
  weights.reserve(modules.size());
  for (const FeatureWeight& m : modules) weights.push_back(m->weight);
  return torch::stack(weights);
}

}  // namespace tzrec::embedding
