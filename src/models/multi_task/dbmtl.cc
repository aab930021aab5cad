#include "models/multi_task/dbmtl.h"

#include <optional>

#include "base/error.h"
#include "base/logging.h"
#include "models/config_convert.h"
#include "models/rank/mask_net.h"
#include "nn/fp16_linear.h"

namespace tzrec::models {

DBMTL::DBMTL(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
             std::vector<std::string> labels, std::vector<std::string> sample_weights)
    : Model(model_config, std::move(labels), std::move(sample_weights)) {
  const protos::DBMTL& cfg = model_config_.dbmtl();
  const std::string path = "model_config.dbmtl";
  init_input(features);
  group_ = first_group("DBMTL");
  int64_t feature_in = embedding_group_->group_total_dim(group_);
  if (cfg.has_mask_net()) {  // as TorchEasyRec: MaskNet first, bottom_mlp on its output
    mask_net_ = register_module("mask_net", nn::MaskNetModule(feature_in, to_mask_net_options(cfg.mask_net(),
                                                                                              path + ".mask_net"),
                                                              path + ".mask_net"));
    feature_in = mask_net_->output_dim();
  }
  if (cfg.has_bottom_mlp()) {
    bottom_mlp_ = register_module("bottom_mlp", nn::MLP(feature_in, to_mlp_options(cfg.bottom_mlp()),
                                                        path + ".bottom_mlp"));
    feature_in = bottom_mlp_->output_dim();
  }
  if (cfg.has_expert_mlp()) {
    std::optional<nn::MLPOptions> gate;
    if (cfg.has_gate_mlp()) gate = to_mlp_options(cfg.gate_mlp());
    mmoe_ = register_module("mmoe", nn::MMoE(feature_in, to_mlp_options(cfg.expert_mlp()), cfg.num_expert(),
                                             static_cast<int64_t>(tasks_.size()), gate, path));
    feature_in = mmoe_->output_dim();
  } else if (cfg.has_gate_mlp()) {
    log::warning("{}.gate_mlp is ignored without expert_mlp (no MMoE), as in TorchEasyRec", path);
  }
  auto task_mlps = register_module("task_mlps", torch::nn::ModuleDict());
  auto relation_mlps = register_module("relation_mlps", torch::nn::ModuleDict());
  auto outputs = register_module("task_outputs", torch::nn::ModuleList());
  using Entry = std::pair<std::string, std::shared_ptr<torch::nn::Module>>;
  std::vector<int64_t> out_dim;  // per tower: what it passes to towers that relate to it
  for (int i = 0; i < cfg.task_towers_size(); ++i) {
    const protos::BayesTaskTower& tc = cfg.task_towers(i);
    const std::string tp = tasks_[static_cast<size_t>(i)].path;
    Tower tower;
    tower.name = tc.tower_name();
    int64_t dim = feature_in;
    if (tc.has_mlp()) {
      tower.mlp = nn::MLP(feature_in, to_mlp_options(tc.mlp()), tp + ".mlp");
      task_mlps->update(std::vector<Entry>{{tower.name, tower.mlp.ptr()}});
      dim = tower.mlp->output_dim();
    }
    if (tc.has_relation_mlp()) {
      int64_t relation_in = dim;
      for (int r = 0; r < tc.relation_tower_names_size(); ++r) {
        const std::string& other = tc.relation_tower_names(r);
        size_t j = 0;
        while (j < towers_.size() && towers_[j].name != other) ++j;
        if (j == towers_.size()) {
          throw ConfigError(fmt::format(
              "{}.relation_tower_names[{}]: '{}' is not a tower before this one; a tower can only depend on towers "
              "listed earlier in task_towers",
              tp, r, other));
        }
        tower.relations.push_back(j);
        relation_in += out_dim[j];
      }
      tower.relation_mlp = nn::MLP(relation_in, to_mlp_options(tc.relation_mlp()), tp + ".relation_mlp");
      relation_mlps->update(std::vector<Entry>{{tower.name, tower.relation_mlp.ptr()}});
      dim = tower.relation_mlp->output_dim();
    } else if (tc.relation_tower_names_size() > 0) {
      log::warning("{}.relation_tower_names are ignored without relation_mlp, as in TorchEasyRec", tp);
    }
    tower.output = torch::nn::Linear(dim, static_cast<int64_t>(tc.num_class()));
    outputs->push_back(tower.output);
    out_dim.push_back(dim);
    towers_.push_back(std::move(tower));
  }
}

TensorMap DBMTL::predict_impl(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> grouped = build_input(batch);
  torch::Tensor net = grouped.at(group_);
  if (mask_net_) net = mask_net_->forward(net);
  if (bottom_mlp_) net = bottom_mlp_->forward(net);
  std::vector<torch::Tensor> task_inputs =
      mmoe_ ? mmoe_->forward(net) : std::vector<torch::Tensor>(towers_.size(), net);
  std::vector<torch::Tensor> relation_net;  // per tower, what towers relating to it read
  TensorMap predictions;
  for (size_t t = 0; t < towers_.size(); ++t) {
    Tower& tower = towers_[t];
    torch::Tensor h = tower.mlp ? tower.mlp->forward(task_inputs[t]) : task_inputs[t];
    if (tower.relation_mlp) {
      std::vector<torch::Tensor> parts = {h};
      for (size_t j : tower.relations) parts.push_back(relation_net[j]);
      h = tower.relation_mlp->forward(torch::cat(parts, 1));
    }
    relation_net.push_back(h);
    task_output_to_prediction(t, nn::linear_forward(h, tower.output->weight, tower.output->bias), &predictions);
  }
  return predictions;
}

}  // namespace tzrec::models
