// MatchTower: one tower of DSSM / DSSMv2 / DAT (TorchEasyRec's DSSMTower, DATTower): its feature
// groups' embedding outputs (each after its group variational dropout, when configured),
// concatenated → MLP → Linear(output_dim) when output_dim > 0 → L2-normalised with COSINE
// similarity.
//   cat(grouped[inputs...]) [rows, Σ group_total_dim] → [rows, output_dim or the MLP's last width]
// DSSM and DSSMv2 towers read one group (`input`); DAT towers read `input` and `augment_input`.
// Submodules (state-dict names below the tower, as TorchEasyRec): "embedding_group" (a tower's
// own EmbeddingGroup: DSSM, DAT), "group_variational_dropouts.<group>", "mlp" (nn::MLP), "output"
// (Linear).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "embedding/embedding_group.h"
#include "models/group_variational_dropouts.h"
#include "models/match/match_options.h"
#include "nn/mlp.h"
#include "tzrec/protos/module.pb.h"

namespace tzrec::models {

class MatchTowerImpl : public torch::nn::Module {
 public:
  // inputs: the feature groups read, in order; mlp: the tower's MLP config, or nullptr (ConfigError
  // "<path>.mlp: required"). own_group: the tower's own EmbeddingGroup, or nullptr (DSSMv2: the
  // model's shared one); `dims_source` is the group that holds the inputs. `path`: the tower's
  // config field ("model_config.dssm.user_tower").
  MatchTowerImpl(std::vector<std::string> inputs, const protos::MLP* mlp, const std::string& path,
                 embedding::EmbeddingGroup own_group, const embedding::EmbeddingGroupImpl& dims_source,
                 const protos::ModelConfig& model_config, const MatchOptions& options);

  // grouped: the embedding group's outputs. [rows, D]. `dropped` (optional): grouped after the
  // group variational dropouts (what the MLP read).
  torch::Tensor forward(std::map<std::string, torch::Tensor> grouped,
                        std::map<std::string, torch::Tensor>* dropped = nullptr);
  // The tower's own embedding group's outputs, then forward.
  torch::Tensor forward(const sparse::Batch& batch, std::map<std::string, torch::Tensor>* dropped = nullptr);

  // Width of the output: output_dim, or the MLP's last width when output_dim is 0.
  int64_t output_dim() const;
  embedding::EmbeddingGroup embedding_group{nullptr};
  const GroupVariationalDropouts& dropouts() const { return dropouts_; }

 private:
  std::vector<std::string> inputs_;
  bool cosine_ = false;
  GroupVariationalDropouts dropouts_;
  nn::MLP mlp_{nullptr};
  torch::nn::Linear output_{nullptr};
};
TORCH_MODULE(MatchTower);

}  // namespace tzrec::models
