// MatchModel: the base of two-tower retrieval models (TorchEasyRec's MatchModel,
// tzrec/models/match_model.py; docs/tzrec-compatibility.md §7.1): a user tower and an item tower
// map their feature groups to embeddings of one width, and the model scores users against items.
//
// Prediction "similarity" [B, N] / temperature:
//   in_batch_negative: user_emb [B, D] @ item_emb [B, D]^T — row b's target is column b;
//   otherwise (a negative sampler): item_emb holds the batch's B positive items, then the sampled
//   negatives (data group __NEG__), then, with a hard negative sampler, H hard negatives:
//     [ <user_b, item_b> | user_b @ negatives^T | hard ] — row b's target is column 0;
//     hard [B, W]: W = 1 + the largest position in hard_neg_indices; entry (b, k) is
//     <user_b, hard item of (b, k)> where that pair exists and -1e32 elsewhere.
// The loss and recall_at_k follow from ModelTask::match (model_losses.cc, model_metrics.cc).
//
// Towers are exported and served on their own: a model built for one tower (`tower`
// "user_tower" / "item_tower") has only that tower's modules, with the state-dict names they have
// in the whole model, and predicts "<tower>_emb" [rows, D] from that tower's features (the item
// tower reads data group __NEG__ when the config has a sampler, which predict fills from the rows
// themselves).
#pragma once

#include <string>
#include <vector>

#include "models/match/match_options.h"
#include "models/match/match_tower.h"
#include "models/model.h"

namespace tzrec::models {

// The similarity matrix (TorchEasyRec's MatchModel.sim) divided by `temperature`, as described
// above: user_emb [B, D]; item_emb [B, D] (in_batch_negative) or [B + N + H, D];
// hard_neg_indices [H, 2] int64 or undefined. Returns [B, B] or [B, 1 + N (+ W)]. Without hard
// negatives the sampled case is one node (nn/sampled_similarity.h).
torch::Tensor match_similarity(const torch::Tensor& user_emb, const torch::Tensor& item_emb,
                               const torch::Tensor& hard_neg_indices, bool in_batch_negative,
                               double temperature = 1.0);

// The towers of a match model ("user_tower", "item_tower") and the feature groups each reads (its
// `input`, then DAT's `augment_input` / MIND's `history_input`; HSTUMatch's user tower every group
// but the item tower's), from the model message of `model_config` (which must be a match model).
std::vector<std::pair<std::string, std::vector<std::string>>> match_towers(const protos::ModelConfig& model_config);

class MatchModel : public Model {
 public:
  static constexpr const char* kUserTower = "user_tower";
  static constexpr const char* kItemTower = "item_tower";

  // Throws ConfigError for temperature <= 0 (at `path`.temperature) and NotSupportedError for
  // similarity EUCLID. `tower`: "" (both towers) or the one tower to build (UsageError for another
  // name).
  template <class Message>
  MatchModel(const protos::ModelConfig& model_config, std::vector<std::string> labels,
             std::vector<std::string> sample_weights, const Message& msg, const std::string& path,
             const std::string& tower)
      : Model(model_config, std::move(labels), std::move(sample_weights)),
        options_(match_options(msg.output_dim(), msg.similarity(), msg.temperature(), msg.in_batch_negative(), path)),
        path_(path),
        tower_(checked_tower(tower)) {}

  const MatchOptions& options() const { return options_; }
  // "" (the whole model) or the tower this model was built for.
  const std::string& tower() const { return tower_; }

  // "similarity" (both towers), or "<tower>_emb" (a model of one tower).
  TensorMap predict_impl(const sparse::Batch& batch) final;

 protected:
  // One tower's output [rows, D] for `batch` (kUserTower / kItemTower; a tower the model has).
  virtual torch::Tensor tower_embedding(const std::string& tower, const sparse::Batch& batch) = 0;
  // The whole model's "similarity" (both towers built).
  virtual TensorMap predict_similarity(const sparse::Batch& batch) = 0;
  // Whether the model has tower `name` (all of them unless built for one).
  bool has_tower(const std::string& name) const { return tower_.empty() || tower_ == name; }

  // The batch's own B rows of a user-side tensor: with force_base_data_group the user features
  // also have the negatives' (padding) rows, which no user score reads.
  static torch::Tensor user_rows(const torch::Tensor& t, const sparse::Batch& batch);
  // "similarity" [B, N] / temperature from the towers' outputs (see the top of this file); user
  // rows beyond the batch's are dropped (user_rows).
  torch::Tensor similarity(const torch::Tensor& user_emb, const torch::Tensor& item_emb,
                           const sparse::Batch& batch) const;
  // Checks the towers' groups: `group` (a tower's `input`, at `field`) is a DEEP group; the item
  // tower's group reads the sampled items (data group __NEG__) exactly when the config has a
  // negative sampler, and without one in_batch_negative must be set.
  void check_tower_group(const std::string& tower, const std::string& group, const std::string& field) const;
  const std::string& path() const { return path_; }
  // Registers tower module `tower` as submodule `name` (kUserTower / kItemTower): its own embedding
  // group (`T::embedding_group`, if any) joins embeddings() as "<name>.embedding_group" with tables
  // "<name>.<table>", and its group variational dropouts' penalties become losses.
  template <class T>
  T register_tower(const std::string& name, T tower) {
    T out = register_module(name, std::move(tower));
    if (out->embedding_group) embeddings_.add(name + ".embedding_group", name + ".", out->embedding_group);
    tower_dropouts_.push_back(&out->dropouts());
    return out;
  }
  // A MatchTower over feature groups `inputs` with its own embedding group (DSSM, DAT, MIND's item
  // tower), its config at "<path>.<name>", registered as `name` (register_tower). `mlp`: the
  // tower's MLP config or nullptr (ConfigError).
  MatchTower register_own_group_tower(const std::string& name, std::vector<std::string> inputs,
                                      const protos::MLP* mlp);
  // The towers' group variational dropouts; their penalties are losses of the model.
  TensorMap feature_p_losses() const override;

 private:
  static std::string checked_tower(const std::string& tower);
  static MatchOptions match_options(int64_t output_dim, int similarity, double temperature, bool in_batch_negative,
                                    const std::string& path);
  MatchOptions options_;
  std::string path_;  // "model_config.dssm"
  std::string tower_;
  std::vector<const GroupVariationalDropouts*> tower_dropouts_;
};

}  // namespace tzrec::models
