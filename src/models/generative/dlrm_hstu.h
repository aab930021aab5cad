// DlrmHSTU and UltraHSTU (TorchEasyRec's tzrec/models/dlrm_hstu.py and ultra_hstu.py,
// docs/tzrec-compatibility.md §4.1): generative ranking over jagged user histories. Feature groups: "contextual" (DEEP: the contextual features,
// or SEQUENCE: its ".query"), the JAGGED_SEQUENCE groups "uih", "candidate", "uih_action",
// "uih_watchtime", "uih_timestamp", "candidate_timestamp" (as the preprocessor reads them).
//   candidates' user embeddings = "_hstu_transducer"(groups)          [Σ targets, D]
//   candidates' item embeddings = "_item_embedding_mlp"(candidate.sequence): Linear(Dc,
//       item_embedding_hidden_dim) → SwishLayerNorm → Linear(·, D) → LayerNorm(D)
//   "_multitask_module" (nn::FusionMTLTower) → per task "logits_<task>" etc. over the candidates,
//   and kTargetRepeatKey = candidates per row ("candidate.sequence_length").
// UltraHSTU: one HSTU per `hstu` channel (a mixture of transducers), each reading its own history
// groups named after the channel ("<name>", "<name>_action", "<name>_watchtime",
// "<name>_timestamp"; "uih" when a single channel has no name): "_hstu_transducer._transducers.<i>."
// with their candidates' embeddings concatenated (a single channel is "_hstu_transducer" itself),
// D = Σ the channels' embedding_dim.
// Each task's label is its label column's values per candidate (a list column), a bit of it with
// task_bitmask. Descending histories (sequence_timestamp_is_ascending false) are reversed —
// the whole batch along its rows, as TorchEasyRec flips every grouped tensor — and the
// predictions flipped back.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/model.h"
#include "nn/fusion_mtl_tower.h"
#include "nn/gr/hstu_transducer.h"

namespace tzrec::models {

class DlrmHSTU : public Model {
 public:
  // model_config's oneof: dlrm_hstu or ultra_hstu.
  DlrmHSTU(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
           std::vector<std::string> labels, std::vector<std::string> sample_weights);
  TensorMap predict_impl(const sparse::Batch& batch) override;

 protected:
  // enable_global_average_loss in training with several ranks: this rank's candidates over the
  // mean over the ranks (one all-reduce per task), so that the ranks' mean losses average to the
  // mean over all candidates, as TorchEasyRec. 1 otherwise (one rank: exactly 1; in evaluation the
  // ranks' batch counts may differ, so no collective runs there).
  double task_loss_scale(const ModelTask& task, const torch::Tensor& label) const override;

 private:
  bool ascending_ = true;
  bool global_average_loss_ = true;
  // The registered HSTUTransducer, or HSTUTransducerStack of the channels: candidates' user embeddings.
  std::function<torch::Tensor(const std::map<std::string, torch::Tensor>&)> encode_;
  torch::nn::Sequential item_mlp_{nullptr};
  nn::FusionMTLTower tower_{nullptr};
};

// UltraHSTU: the same model over ultra_hstu's channels.
using UltraHSTU = DlrmHSTU;

}  // namespace tzrec::models
