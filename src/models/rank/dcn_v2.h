// DCNV2, Deep & Cross Network v2 with a low-rank cross (tzrec/models/dcn_v2.py). Input: the first
// feature group, x: [B, d].
//
//   h = backbone(x) when `backbone` is set, else x                 [B, d']
//   c = cross(h): nn::CrossV2 (cross.cross_num layers of rank cross.low_rank)   [B, d']
//   with `deep`: c = cat[c, deep(x)]  (deep reads the group input x, not the backbone output)
//   y = output_mlp(final(c))            output_mlp has no bias
// Submodules (state-dict prefixes, as tzrec's DCNV2): embedding_group, backbone (MLP, optional),
// cross (u_kernels.<l>.weight, v_kernels.<l>.weight / .bias), deep (MLP, optional), final (MLP),
// output_mlp (Linear(…, num_class, bias=False): "output_mlp.weight" only).
#pragma once

#include "models/model.h"
#include "nn/cross.h"
#include "nn/mlp.h"

namespace tzrec::models {

class DCNV2 : public Model {
 public:
  DCNV2(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
        std::vector<std::string> labels, std::vector<std::string> sample_weights);
  TensorMap predict_impl(const sparse::Batch& batch) override;

 private:
  std::string group_;  // the first feature group
  nn::MLP backbone_{nullptr};
  nn::CrossV2 cross_{nullptr};
  nn::MLP deep_{nullptr};
  nn::MLP final_{nullptr};
  torch::nn::Linear output_mlp_{nullptr};
};

}  // namespace tzrec::models
