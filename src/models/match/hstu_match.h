// HSTUMatch (TorchEasyRec's tzrec/models/hstu.py, docs/models/hstu_match.md): two-tower retrieval
// whose user tower is HSTU over the user interaction history. Feature groups: the user tower's
// `input` ("uih", JAGGED_SEQUENCE), optional "contextual" (DEEP, or SEQUENCE: its query), the
// preprocessor's "uih_action" / "uih_watchtime" / "uih_timestamp", optional "query_time" (DEEP, one
// value per row: the request time anchoring the time encoding), and the item tower's `input`
// ("candidate", JAGGED_SEQUENCE: each row's positive items).
//   user tower "user_tower": "_hstu_encoder" (nn/gr/hstu_match_encoder.h: each row's last encoded
//     item) → "output" Linear(D, output_dim) when output_dim > 0 → L2-normalised (eps 1e-6) with
//     COSINE similarity                                                          [B, D]
//   item tower "item_tower": the candidates' embeddings → "mlp" (optional) → "output" → normalised
//     likewise                                                                   [Q + N (+ H), D]
//   the model's "embedding_group" serves both.
// Training needs a negative sampler over the candidate sequence (feature/data_groups.h: its
// item_id_field is the candidate sub-feature's input, e.g. "cand_seq__video_id"): the Q = Σ_b
// positives of the rows are the queries, each scored with its row's user embedding against itself
// and the N sampled negatives (and hard negatives): "similarity" [Q, 1 + N (+ W)] / temperature
// (match_model.h), target column 0. The label columns are read but not used, as in TorchEasyRec.
// Export (models of one tower): the user tower reads every group but the candidate one; the item
// tower's package has the candidate sub-features as plain features (item_package_config) and
// embeds one item per row ("<candidate>.query").
#pragma once

#include <map>
#include <string>
#include <vector>

#include "models/match/match_model.h"
#include "nn/gr/hstu_match_encoder.h"
#include "nn/mlp.h"

namespace tzrec::models {

class HSTUMatchUserTowerImpl : public torch::nn::Module {
 public:
  HSTUMatchUserTowerImpl(const nn::gr::HSTUOptions& hstu, nn::gr::InputPreprocessorDims dims, int64_t max_seq_len,
                         const std::string& path, std::string query_time_key, const MatchOptions& options,
                         bool ascending);
  // grouped: the embedding group's outputs → [B, D]
  torch::Tensor forward(const std::map<std::string, torch::Tensor>& grouped);

 private:
  bool ascending_ = true;
  bool cosine_ = false;
  nn::gr::HSTUMatchEncoder encoder_{nullptr};
  torch::nn::Linear output_{nullptr};
};
TORCH_MODULE(HSTUMatchUserTower);

class HSTUMatchItemTowerImpl : public torch::nn::Module {
 public:
  // mlp: the tower's MLP config or nullptr (no projection).
  HSTUMatchItemTowerImpl(int64_t input_dim, const protos::MLP* mlp, const std::string& path,
                         const MatchOptions& options);
  // x: the candidates' embeddings [n, Dc] → [n, D]
  torch::Tensor forward(const torch::Tensor& x);
  int64_t output_dim() const { return output_dim_; }

 private:
  bool cosine_ = false;
  int64_t output_dim_ = 0;
  nn::MLP mlp_{nullptr};
  torch::nn::Linear output_{nullptr};
};
TORCH_MODULE(HSTUMatchItemTower);

class HSTUMatch : public MatchModel {
 public:
  HSTUMatch(const protos::ModelConfig& model_config, const std::vector<feature::FeatureInfo>& features,
            std::vector<std::string> labels, std::vector<std::string> sample_weights, const std::string& tower = "");

  // The config of the item tower's export package: `config` (already cut to the item tower's
  // group) with the candidate sequence's sub-features as plain features of the same names and
  // tables (TorchEasyRec's project_grouped_sequence_feature_to_scalar: an unset default_value
  // becomes the sequence's "0"), so that the package embeds one item per input row.
  static protos::EasyRecConfig item_package_config(const protos::EasyRecConfig& config);

 protected:
  TensorMap predict_similarity(const sparse::Batch& batch) override;
  torch::Tensor tower_embedding(const std::string& tower, const sparse::Batch& batch) override;

 private:
  std::string candidate_group_;
  bool item_reads_items_ = true;  // the candidate group has sequence features (else plain ones)
  HSTUMatchUserTower user_tower_{nullptr};
  HSTUMatchItemTower item_tower_{nullptr};
};

}  // namespace tzrec::models
