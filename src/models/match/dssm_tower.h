// DSSMTower: one tower of DSSM / DSSMv2 (TorchEasyRec's DSSMTower): its feature group's embedding
// output (after the group variational dropout, when configured) → MLP → Linear(output_dim) when
// output_dim > 0 → L2-normalised with COSINE similarity.
//   x [rows, group_total_dim] → [rows, output_dim or the MLP's last width]
// Submodules (state-dict names below the tower, as TorchEasyRec): "embedding_group" (DSSM only:
// the tower's own EmbeddingGroup), "group_variational_dropouts.<group>", "mlp" (nn::MLP),
// "output" (Linear).
#pragma once

#include <map>
#include <string>

#include <torch/torch.h>

#include "embedding/embedding_group.h"
#include "models/group_variational_dropouts.h"
#include "models/match/match_model.h"
#include "nn/mlp.h"
#include "tzrec/protos/tower.pb.h"

namespace tzrec::models {

class DSSMTowerImpl : public torch::nn::Module {
 public:
  // own_group: the tower's own EmbeddingGroup (DSSM) or nullptr (DSSMv2: the model's shared one);
  // `dims_source` is the group that holds the tower's input group. `path`: the tower's config
  // field ("model_config.dssm.user_tower"); a missing mlp → ConfigError there.
  DSSMTowerImpl(const protos::Tower& tower, const std::string& path, embedding::EmbeddingGroup own_group,
                const embedding::EmbeddingGroupImpl& dims_source, const protos::ModelConfig& model_config,
                const MatchOptions& options);

  // grouped: the embedding group's outputs; reads grouped[input]. [rows, D]
  torch::Tensor forward(std::map<std::string, torch::Tensor> grouped);
  // The tower's own embedding group's outputs, then forward (DSSM).
  torch::Tensor forward(const sparse::Batch& batch);

  embedding::EmbeddingGroup embedding_group{nullptr};
  const GroupVariationalDropouts& dropouts() const { return dropouts_; }

 private:
  std::string input_;
  bool cosine_ = false;
  GroupVariationalDropouts dropouts_;
  nn::MLP mlp_{nullptr};
  torch::nn::Linear output_{nullptr};
};
TORCH_MODULE(DSSMTower);

}  // namespace tzrec::models
