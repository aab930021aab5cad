#include "models/group_variational_dropouts.h"

#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::models {

void GroupVariationalDropouts::init(torch::nn::Module& owner, const protos::ModelConfig& model_config,
                                    const std::vector<std::string>& groups,
                                    const std::function<std::vector<int64_t>(const std::string&)>& dims_of) {
  if (!model_config.has_variational_dropout()) return;
  const protos::VariationalDropout& vd = model_config.variational_dropout();
  if (!std::isfinite(vd.regularization_lambda()) || vd.regularization_lambda() < 0) {
    throw ConfigError(fmt::format("model_config.variational_dropout.regularization_lambda: must be a finite number "
                                  ">= 0, got {}",
                                  vd.regularization_lambda()));
  }
  auto dict = owner.register_module("group_variational_dropouts", torch::nn::ModuleDict());
  for (const std::string& group : groups) {
    std::vector<int64_t> dims = dims_of(group);
    if (dims.size() < 2) continue;  // tzrec: a single feature has nothing to be ranked against
    nn::VariationalDropout dropout(std::move(dims), vd.regularization_lambda());
    using Entry = std::pair<std::string, std::shared_ptr<torch::nn::Module>>;
    dict->update(std::vector<Entry>{{group, dropout.ptr()}});
    dropouts_.emplace_back(group, dropout);
  }
}

void GroupVariationalDropouts::apply(std::map<std::string, torch::Tensor>& grouped) {
  penalties_.clear();
  for (auto& [group, dropout] : dropouts_) {
    auto [noisy, penalty] = dropout->forward(grouped.at(group));
    grouped[group] = noisy;
    penalties_[group + "_feature_p_loss"] = penalty;
  }
}

}  // namespace tzrec::models
