// MaskNet (tzrec/models/masknet.py; docs/tzrec-compatibility.md §4): the first feature group →
// MaskNetModule (nn/mask_net.h: LayerNorm, parallel or serial MaskBlocks with instance-guided
// masks, optional top_mlp) → Linear(…, num_class, bias=False).
// Submodules (state-dict prefixes): embedding_group, mask_net_layer (ln_emb, mask_blocks.<i>,
// top_mlp), output_linear.
// TorchEasyRec sizes output_linear from top_mlp.hidden_units[-1] and so fails without a top_mlp;
// here the module's output width is used, which is the same whenever TorchEasyRec runs.
#pragma once

#include "models/model.h"
#include "nn/mask_net.h"
#include "tzrec/protos/module.pb.h"

namespace tzrec::models {

// MaskNetModule config → options, as TorchEasyRec's config_to_kwargs passes them: reduction_ratio
// is the shortest decimal that round-trips the float32 (protobuf's json_format), so that
// int(input_dim * reduction_ratio) gives the same aggregation dims. Warns when aggregation_dim is
// set but ignored (reduction_ratio, 1.0 by default, is non-zero). `path` names the message.
nn::MaskNetOptions to_mask_net_options(const protos::MaskNetModule& cfg, const std::string& path);

class MaskNet : public Model {
 public:
  MaskNet(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
          std::vector<std::string> labels, std::vector<std::string> sample_weights);
  TensorMap predict_impl(const sparse::Batch& batch) override;

 private:
  std::string group_;  // the first feature group
  nn::MaskNetModule mask_net_layer_{nullptr};
  torch::nn::Linear output_linear_{nullptr};
};

}  // namespace tzrec::models
