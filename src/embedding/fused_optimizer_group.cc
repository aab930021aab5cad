#include "embedding/fused_optimizer_group.h"


namespace tzrec::embedding {

FusedOptimizerGroup::FusedOptimizerGroup(std::vector<FusedEmbeddingBags*> members, std::vector<std::string> prefixes)
    : members_(std::move(members)), prefixes_(std::move(prefixes)) {
  TORCH_CHECK(!members_.empty() && members_.size() == prefixes_.size(),
              "FusedOptimizerGroup needs one prefix per fused operator");
}

void FusedOptimizerGroup::set_lr(double lr) {
  for (FusedEmbeddingBags* m : members_) m->set_lr(lr);
}

double FusedOptimizerGroup::lr() const { return members_.front()->lr(); }

void FusedOptimizerGroup::set_gradient_scale(std::optional<double> scale) {
  for (FusedEmbeddingBags* m : members_) m->set_gradient_scale(scale);
}

bool FusedOptimizerGroup::last_backward_found_inf() const {
  for (const FusedEmbeddingBags* m : members_) {
    if (m->last_backward_found_inf()) return true;
  }
  return false;
}

std::map<std::string, torch::Tensor> FusedOptimizerGroup::state_dict() const {
  std::map<std::string, torch::Tensor> out;
  for (size_t i = 0; i < members_.size(); ++i) {
    for (auto& [k, v] : members_[i]->state_dict()) out.emplace(prefixes_[i] + k, v);
  }
  return out;
}

void FusedOptimizerGroup::load_state_dict(const std::map<std::string, torch::Tensor>& state) {
  std::vector<std::map<std::string, torch::Tensor>> parts(members_.size());
  for (const auto& [key, value] : state) {
    size_t best = 0;  // the longest prefix that matches ("" always does)
    for (size_t i = 1; i < members_.size(); ++i) {
      if (key.rfind(prefixes_[i], 0) == 0 && prefixes_[i].size() > prefixes_[best].size()) best = i;
    }
    parts[best].emplace(key.substr(prefixes_[best].size()), value);
  }
  for (size_t i = 0; i < members_.size(); ++i) members_[i]->load_state_dict(parts[i]);
}

FusedEmbeddingBags::Timing FusedOptimizerGroup::timing() const {
  FusedEmbeddingBags::Timing sum;
  for (const FusedEmbeddingBags* m : members_) {
    const auto& t = m->timing();
    sum.forward_seconds += t.forward_seconds;
    sum.backward_seconds += t.backward_seconds;
    sum.forward_calls += t.forward_calls;
    sum.backward_calls += t.backward_calls;
  }
  return sum;
}

void FusedOptimizerGroup::reset_timing() {
  for (FusedEmbeddingBags* m : members_) m->reset_timing();
}

}  // namespace tzrec::embedding
