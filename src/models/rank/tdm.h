// TDM (tzrec/models/tdm.py, docs/tzrec-compatibility.md §4): the node scorer of tree-based deep
// retrieval, a rank model over the rows the TDM sampler expands each batch into
// (feature/tdm_rows.h). The SEQUENCE group (its query: the tree node's item features, its
// sequence: the user's history) goes through a MultiWindowDINEncoder; the other groups' outputs
// are concatenated after it, in config order; then the `final` MLP and Linear(num_class).
//   x = [multiwindow_din(seq group) [B, D·(L+1)], group_1 [B, d_1], ...]
//   logits = output_mlp(deep_mlp(x))
// With several SEQUENCE groups the last one is used (TorchEasyRec keeps the last it sees).
// Submodules (state-dict prefixes): embedding_group, multiwindow_din, deep_mlp, output_mlp.
//
// The embedding package (TorchEasyRec's TDMEmbedding; tower kEmbeddingTower, what
// export_dir/embedding holds, export/exporter.cc): a config whose only feature group is the first
// SEQUENCE group's query features as a DEEP group of the same name; it predicts
// "item_emb" [B, Dq], the group's pooled features in order — the "<group>.query" the scorer
// feeds its encoder. Only embedding_group is built.
#pragma once

#include <string>
#include <vector>

#include "models/model.h"
#include "nn/mlp.h"
#include "nn/multi_window_din_encoder.h"

namespace tzrec::models {

class TDM : public Model {
 public:
  // ConfigError (with the field path) for a config without a SEQUENCE group, without
  // multiwindow_din / final, or with bad encoder / MLP settings.
  static constexpr const char* kEmbeddingTower = "embedding";

  // `tower`: "" (the scorer) or kEmbeddingTower (see above; UsageError for another name).
  TDM(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
      std::vector<std::string> labels, std::vector<std::string> sample_weights, const std::string& tower = "");
  TensorMap predict_impl(const sparse::Batch& batch) override;

 private:
  bool embedding_only_ = false;
  std::string seq_group_;
  std::vector<std::string> non_seq_groups_;
  nn::MultiWindowDINEncoder multiwindow_din_{nullptr};
  nn::MLP deep_mlp_{nullptr};
  torch::nn::Linear output_mlp_{nullptr};
};

}  // namespace tzrec::models
