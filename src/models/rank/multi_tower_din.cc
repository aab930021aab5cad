#include "models/rank/multi_tower_din.h"

#include "base/error.h"
#include "models/config_convert.h"
#include "nn/fp16_linear.h"

namespace tzrec::models {

MultiTowerDIN::MultiTowerDIN(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
                             std::vector<std::string> labels, std::vector<std::string> sample_weights)
    : Model(model_config, std::move(labels), std::move(sample_weights)) {
  const protos::MultiTowerDIN& cfg = model_config_.multi_tower_din();
  const std::string path = "model_config.multi_tower_din";
  init_input(features);
  if (cfg.towers_size() + cfg.din_towers_size() == 0) {
    throw ConfigError(path + ": needs at least one tower or din_tower");
  }
  towers_ = GroupTowers(*this, embedding_group_, cfg.towers(), path + ".towers");
  int64_t total_dim = towers_.output_dim();
  auto list = register_module("din_towers", torch::nn::ModuleList());
  const embedding::SequenceEmbeddingGroup sequences = embedding_group_->sequence_groups();
  for (int i = 0; i < cfg.din_towers_size(); ++i) {
    const protos::DINTower& tower = cfg.din_towers(i);
    const std::string tp = fmt::format("{}.din_towers[{}]", path, i);
    if (!sequences || !sequences->has_group(tower.input())) {
      throw ConfigError(fmt::format("{}.input: '{}' is not a SEQUENCE feature group; a DIN tower attends over a "
                                    "group with group_type: SEQUENCE",
                                    tp, tower.input()));
    }
    if (!tower.has_attn_mlp()) throw ConfigError(tp + ".attn_mlp: required, e.g. attn_mlp { hidden_units: [64] }");
    nn::DINEncoderOptions options;
    options.attn_mlp = to_mlp_options(tower.attn_mlp());
    nn::DINEncoder din(sequences->sequence_dim(tower.input()), sequences->query_dim(tower.input()), tower.input(),
                       std::move(options), tp);
    list->push_back(din);
    din_towers_.push_back(din);
    total_dim += din->output_dim();
  }
  int64_t final_dim = total_dim;
  if (cfg.has_final()) {
    final_mlp_ = register_module("final_mlp", nn::MLP(total_dim, to_mlp_options(cfg.final()), path + ".final"));
    final_dim = final_mlp_->output_dim();
  }
  output_mlp_ = register_module("output_mlp", torch::nn::Linear(final_dim, num_class_));
}

TensorMap MultiTowerDIN::predict_impl(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> grouped = build_input(batch);
  std::vector<torch::Tensor> outputs = towers_.forward(grouped);
  for (nn::DINEncoder& din : din_towers_) outputs.push_back(din->forward(grouped));  // [B, D_seq]
  torch::Tensor y = torch::cat(outputs, -1);
  if (final_mlp_) y = final_mlp_->forward(y);
  // output_mlp through nn::linear_forward (follows the mixed-precision mode).
  return output_to_prediction(nn::linear_forward(y, output_mlp_->weight, output_mlp_->bias));
}

}  // namespace tzrec::models
