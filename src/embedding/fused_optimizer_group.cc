#include "embedding/fused_optimizer_group.h"

#include <algorithm>
#include <optional>


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
  // A key "<prefix><table>.<state>" goes to the member with the longest matching prefix that has
  // the table (members may share a prefix); keys of no table stay with the first such member,
  // whose load_state_dict reports them.
  std::vector<std::map<std::string, torch::Tensor>> parts(members_.size());
  for (const auto& [key, value] : state) {
    size_t longest = 0;
    for (size_t i = 0; i < members_.size(); ++i) {
      if (key.rfind(prefixes_[i], 0) == 0) longest = std::max(longest, prefixes_[i].size());
    }
    const std::string rest = key.substr(longest);
    const std::string table = rest.substr(0, rest.find('.'));
    std::optional<size_t> first, owner;
    for (size_t i = 0; i < members_.size() && !owner; ++i) {
      if (prefixes_[i].size() != longest || key.rfind(prefixes_[i], 0) != 0) continue;
      if (!first) first = i;
      for (const FusedTableSpec& t : members_[i]->tables()) {
        if (t.name == table) owner = i;
      }
    }
    parts[owner ? *owner : *first].emplace(rest, value);
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
