// Helpers for the models/ unit tests only (header-only; not used by the library).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include "feature/feature_info.h"
#include "sparse/batch.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::models::testing {

// Text format without enforcing proto2 `required` fields (train_input_path etc.).
inline protos::EasyRecConfig parse_config(const std::string& text) {
  protos::EasyRecConfig config;
  google::protobuf::TextFormat::Parser parser;
  parser.AllowPartialMessage(true);
  EXPECT_TRUE(parser.ParseFromString(text, &config)) << text;
  return config;
}

// The small model the loss and metric tests share: MultiTower over group "user" = [sparse feature
// "u"] (tower [4], final [3]); `model_extra` is appended inside model_config, `data` is the body of
// data_config.
inline std::string tiny_multi_tower_config(const std::string& model_extra,
                                           const std::string& data = R"(label_fields: "clk")") {
  return "data_config { " + data + R"( }
    model_config {
      feature_groups { group_name: "user" feature_names: ["u"] }
      multi_tower { towers { input: "user" mlp { hidden_units: [4] } } final { hidden_units: [3] } }
      )" + model_extra + "\n}";
}

inline feature::FeatureInfo sparse_feature(const std::string& name, int64_t rows, int64_t dim) {
  feature::FeatureInfo f;
  f.name = name;
  f.type = "id_feature";
  f.is_sparse = true;
  f.num_embeddings = rows;
  f.embedding_dim = dim;
  f.embedding_name = name + "_emb";
  return f;
}

inline feature::FeatureInfo dense_feature(const std::string& name, int64_t value_dim) {
  feature::FeatureInfo f;
  f.name = name;
  f.type = "raw_feature";
  f.is_sparse = false;
  f.value_dim = value_dim;
  return f;
}

// Key-major KJT from per-key, per-row id lists.
inline sparse::KeyedJaggedTensor make_kjt(const std::vector<std::string>& keys,
                                          const std::vector<std::vector<std::vector<int64_t>>>& ids) {
  std::vector<int64_t> values, lengths;
  for (const auto& per_key : ids) {
    for (const auto& row : per_key) {
      lengths.push_back(static_cast<int64_t>(row.size()));
      values.insert(values.end(), row.begin(), row.end());
    }
  }
  return sparse::KeyedJaggedTensor(keys, torch::tensor(values, torch::kInt64), torch::tensor(lengths, torch::kInt64));
}

// Sum-pooled lookup of `ids` rows in `weight` [rows, dim] → [B, dim] (empty bag → zeros).
inline torch::Tensor pooled(const torch::Tensor& weight, const std::vector<std::vector<int64_t>>& ids) {
  std::vector<torch::Tensor> rows;
  for (const auto& row : ids) {
    torch::Tensor acc = torch::zeros({weight.size(1)});
    for (int64_t id : row) acc = acc + weight[id];
    rows.push_back(acc);
  }
  return torch::stack(rows);
}

// The message of what f() throws, "(no error)" when it returns.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// The submodule of `m` named `name` (e.g. "_task_tower.0") as M; nullptr (and a test failure)
// when there is none or it is not an M.
template <class M>
std::shared_ptr<M> child(torch::nn::Module& m, const std::string& name) {
  for (const auto& item : m.named_modules()) {
    if (item.key() == name) return std::dynamic_pointer_cast<M>(item.value());
  }
  ADD_FAILURE() << "no module " << name;
  return nullptr;
}

inline std::vector<std::string> keys_of(const std::vector<std::pair<std::string, torch::Tensor>>& params) {
  std::vector<std::string> out;
  for (const auto& p : params) out.push_back(p.first);
  return out;
}

}  // namespace tzrec::models::testing
