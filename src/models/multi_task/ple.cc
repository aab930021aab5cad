#include "models/multi_task/ple.h"

#include "base/error.h"
#include "models/config_convert.h"

namespace tzrec::models {

PLE::PLE(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
         std::vector<std::string> labels, std::vector<std::string> sample_weights)
    : Model(model_config, std::move(labels), std::move(sample_weights)) {
  const protos::PLE& cfg = model_config_.ple();
  init_input(features);
  group_ = first_group("PLE");
  if (cfg.extraction_networks_size() == 0) {
    throw ConfigError("model_config.ple.extraction_networks: needs at least one extraction network");
  }
  const int64_t feature_in = embedding_group_->group_total_dim(group_);
  std::vector<int64_t> task_dims(tasks_.size(), feature_in);
  int64_t shared_dim = feature_in;
  auto nets = register_module("_extraction_nets", torch::nn::ModuleList());
  for (int l = 0; l < cfg.extraction_networks_size(); ++l) {
    const protos::ExtractionNetwork& net = cfg.extraction_networks(l);
    const std::string path = fmt::format("model_config.ple.extraction_networks[{}]", l);
    if (!net.has_share_expert_net()) throw ConfigError(path + ".share_expert_net: required");
    layers_.emplace_back(task_dims, shared_dim, net.share_num(), net.expert_num_per_task(),
                         to_mlp_options(net.share_expert_net()), to_mlp_options(net.task_expert_net()),
                         l + 1 == cfg.extraction_networks_size(), path);
    nets->push_back(layers_.back());
    task_dims.assign(tasks_.size(), layers_.back()->output_dim());
    shared_dim = layers_.back()->output_dim();
  }
  towers_ = register_task_towers(cfg.task_towers(), task_dims);
}

TensorMap PLE::predict_impl(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> grouped = build_input(batch);
  torch::Tensor net = grouped.at(group_);
  std::vector<torch::Tensor> task_inputs(towers_.size(), net);
  torch::Tensor shared = net;
  for (auto& layer : layers_) std::tie(task_inputs, shared) = layer->forward(task_inputs, shared);
  TensorMap predictions;
  for (size_t t = 0; t < towers_.size(); ++t) {
    task_output_to_prediction(t, towers_[t]->forward(task_inputs[t]), &predictions);
  }
  return predictions;
}

}  // namespace tzrec::models
