// The sparse optimizer of a model whose tables live in several collections (the DEEP / WIDE
// groups' and the SEQUENCE groups'): one fused operator per collection, driven as one — one
// learning rate, one loss scale, one optimizer state keyed by "<member prefix><table>.<state>"
// (the prefixes tell the collections apart; tables of two collections may share a name).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "embedding/fused_embedding_bags.h"

namespace tzrec::embedding {

class FusedOptimizerGroup {
 public:
  // prefixes: one per member, distinct ("" for the first, e.g. "sequence." for the next).
  FusedOptimizerGroup(std::vector<FusedEmbeddingBags*> members, std::vector<std::string> prefixes);

  void set_lr(double lr);
  double lr() const;
  void set_gradient_scale(std::optional<double> scale);
  // Whether any member skipped its latest update for an inf / nan gradient.
  bool last_backward_found_inf() const;
  // Every member's state (FusedEmbeddingBags::state_dict keys).
  std::map<std::string, torch::Tensor> state_dict() const;
  // Each member takes the keys with its prefix (the longest matching one); a missing or unexpected
  // key or a shape mismatch → tzrec::CheckpointError naming the key.
  void load_state_dict(const std::map<std::string, torch::Tensor>& state);
  // The members' timing, summed.
  FusedEmbeddingBags::Timing timing() const;
  void reset_timing();
  const std::vector<FusedEmbeddingBags*>& members() const { return members_; }

 private:
  std::vector<FusedEmbeddingBags*> members_;
  std::vector<std::string> prefixes_;
};

}  // namespace tzrec::embedding
