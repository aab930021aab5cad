#include "models/rank/group_towers.h"

#include <fmt/format.h>

#include "base/error.h"
#include "models/config_convert.h"

namespace tzrec::models {

GroupTowers::GroupTowers(torch::nn::Module& model, const embedding::EmbeddingGroup& groups,
                         const google::protobuf::RepeatedPtrField<protos::Tower>& towers, const std::string& path) {
  auto dict = model.register_module("towers", torch::nn::ModuleDict());
  for (int i = 0; i < towers.size(); ++i) {
    const protos::Tower& tower = towers[i];
    const std::string tp = fmt::format("{}[{}]", path, i);
    const std::string& group = tower.input();
    if (!groups->has_group(group)) throw ConfigError(fmt::format("{}.input: unknown feature group '{}'", tp, group));
    if (dict->contains(group)) throw ConfigError(fmt::format("{}.input: group '{}' already has a tower", tp, group));
    if (!tower.has_mlp()) throw ConfigError(fmt::format("{}.mlp: required", tp));
    nn::MLP mlp(groups->group_total_dim(group), to_mlp_options(tower.mlp()), tp + ".mlp");
    using Entry = std::pair<std::string, std::shared_ptr<torch::nn::Module>>;
    dict->update(std::vector<Entry>{{group, mlp.ptr()}});
    mlps_.emplace_back(group, mlp);
    output_dim_ += mlp->output_dim();
  }
}

std::vector<torch::Tensor> GroupTowers::forward(const std::map<std::string, torch::Tensor>& grouped) {
  std::vector<torch::Tensor> out;
  out.reserve(mlps_.size());
  for (auto& [group, mlp] : mlps_) out.push_back(mlp->forward(grouped.at(group)));  // [B, H_i]
  return out;
}

}  // namespace tzrec::models
