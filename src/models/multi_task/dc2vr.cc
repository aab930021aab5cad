#include "models/multi_task/dc2vr.h"

#include <optional>

#include "base/error.h"
#include "models/config_convert.h"
#include "nn/fp16_linear.h"

namespace tzrec::models {

DC2VR::DC2VR(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
             std::vector<std::string> labels, std::vector<std::string> sample_weights)
    : Model(model_config, std::move(labels), std::move(sample_weights)) {
  const protos::DC2VR& cfg = model_config_.dc2vr();
  const std::string path = "model_config.dc2vr";
  init_input(features);
  group_ = first_group("DC2VR");
  int64_t in = embedding_group_->group_total_dim(group_);
  if (cfg.has_bottom_mlp()) {
    bottom_mlp_ = register_module("bottom_mlp", nn::MLP(in, to_mlp_options(cfg.bottom_mlp()), path + ".bottom_mlp"));
    in = bottom_mlp_->output_dim();
  }
  if (cfg.has_expert_mlp()) {
    std::optional<nn::MLPOptions> gate;
    if (cfg.has_gate_mlp()) gate = to_mlp_options(cfg.gate_mlp());
    mmoe_ = register_module("mmoe", nn::MMoE(in, to_mlp_options(cfg.expert_mlp()), cfg.num_expert(),
                                             static_cast<int64_t>(tasks_.size()), gate, path));
    in = mmoe_->output_dim();
  }

  // task_mlps, intervention and task_outputs in TorchEasyRec's registration order.
  torch::nn::ModuleDict task_mlps, interventions;
  torch::nn::ModuleList task_outputs;
  towers_.resize(static_cast<size_t>(cfg.task_towers_size()));
  std::vector<int64_t> tower_dim(towers_.size(), in);  // each tower's representation after its MLP
  for (size_t t = 0; t < towers_.size(); ++t) {
    const protos::InterventionTaskTower& tc = cfg.task_towers(static_cast<int>(t));
    towers_[t].name = tc.tower_name();
    if (tc.has_mlp()) {
      const std::string mlp_path = tasks_[t].path + ".mlp";
      towers_[t].mlp = nn::MLP(in, to_mlp_options(tc.mlp()), mlp_path);
      task_mlps->update({{tc.tower_name(), towers_[t].mlp.ptr()}});
      tower_dim[t] = towers_[t].mlp->output_dim();
    }
  }
  for (size_t t = 0; t < towers_.size(); ++t) {
    const protos::InterventionTaskTower& tc = cfg.task_towers(static_cast<int>(t));
    const std::string tp = tasks_[t].path;
    if (!tc.has_low_rank_dim()) {
      if (tc.intervention_tower_names_size() > 0) {
        throw ConfigError(tp + ".low_rank_dim: required with intervention_tower_names (the rank of the shared space)");
      }
      continue;
    }
    if (tc.intervention_tower_names_size() == 0) {
      throw ConfigError(tp + ".intervention_tower_names: name at least one earlier tower to intervene with, or drop "
                             "low_rank_dim");
    }
    int64_t source_dim = 0;
    for (int k = 0; k < tc.intervention_tower_names_size(); ++k) {
      const std::string& name = tc.intervention_tower_names(k);
      size_t s = 0;
      while (s < t && towers_[s].name != name) ++s;
      if (s == t) {
        throw ConfigError(fmt::format("{}.intervention_tower_names[{}]: '{}' is not a tower listed before '{}'; a "
                                      "tower intervenes only with earlier towers",
                                      tp, k, name, tc.tower_name()));
      }
      towers_[t].sources.push_back(s);
      source_dim += tower_dim[s];  // an intervened tower keeps its width
    }
    const int64_t rank = tc.low_rank_dim();
    if (rank < 1 || rank >= tower_dim[t] || rank >= source_dim) {
      throw ConfigError(fmt::format("{}.low_rank_dim: must be ≥ 1 and below the tower's width ({}) and the width of "
                                    "its intervention towers together ({}), got {}",
                                    tp, tower_dim[t], source_dim, rank));
    }
    const double dropout = tc.dropout_ratio();
    if (!(dropout >= 0.0 && dropout <= 1.0)) {
      throw ConfigError(fmt::format("{}.dropout_ratio: must be in [0, 1], got {}", tp, dropout));
    }
    towers_[t].intervention = nn::Intervention(tower_dim[t], source_dim, rank, dropout);
    interventions->update({{tc.tower_name(), towers_[t].intervention.ptr()}});
  }
  for (size_t t = 0; t < towers_.size(); ++t) {
    towers_[t].output = torch::nn::Linear(tower_dim[t], tasks_[t].num_class);
    task_outputs->push_back(towers_[t].output);
  }
  register_module("task_mlps", task_mlps);
  register_module("intervention", interventions);
  register_module("task_outputs", task_outputs);
}

TensorMap DC2VR::predict_impl(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> grouped = build_input(batch);
  torch::Tensor net = grouped.at(group_);
  if (bottom_mlp_) net = bottom_mlp_->forward(net);
  std::vector<torch::Tensor> inputs = mmoe_ ? mmoe_->forward(net) : std::vector<torch::Tensor>(towers_.size(), net);
  std::vector<torch::Tensor> reps(towers_.size());  // each tower's representation, after its intervention
  TensorMap predictions;
  for (size_t t = 0; t < towers_.size(); ++t) {
    Tower& tower = towers_[t];
    torch::Tensor rep = tower.mlp ? tower.mlp->forward(inputs[t]) : inputs[t];
    if (tower.intervention) {
      std::vector<torch::Tensor> sources;
      for (size_t s : tower.sources) sources.push_back(reps[s]);
      rep = tower.intervention->forward(rep, torch::cat(sources, -1));
    }
    reps[t] = rep;
    task_output_to_prediction(t, nn::linear_forward(rep, tower.output->weight, tower.output->bias), &predictions);
  }
  return predictions;
}

}  // namespace tzrec::models
