// Helpers for the models/ unit tests only (header-only; not used by the library).
#pragma once

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include "embedding/sharded_lookup.h"
#include "feature/feature_info.h"
#include "feature/features.h"
#include "models/model.h"
#include "nn/testing.h"
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

// `f` as an item feature of grouped sequence `sequence` (a sparse one: one id per item);
// `sampled`: the sequence gets a negative sampler's items (feature/data_groups.h).
inline feature::FeatureInfo sequence_feature(feature::FeatureInfo f, const std::string& sequence,
                                             bool sampled = false) {
  f.is_sequence = true;
  f.sequence_name = sequence;
  f.sampled = sampled;
  if (f.is_sparse) f.value_dim = 1;
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

// What building the model of `config` raises (as check_config and train_eval build it: features,
// then the model with its losses and metrics, no table allocated), "(no error)" when it builds.
inline std::string construction_error(const protos::EasyRecConfig& config) {
  return error_of([&] {
    embedding::DeferTableAllocation defer;
    create_model(config, feature::build_feature_infos(config));
  });
}

// Building the model of `config` raises an error that names `path` and contains `message_part`.
inline ::testing::AssertionResult HasProblem(const protos::EasyRecConfig& config, const std::string& path,
                                             const std::string& message_part) {
  const std::string error = construction_error(config);
  if (error.find(path) != std::string::npos && error.find(message_part) != std::string::npos) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "expected an error naming '" << path << "' with '" << message_part
                                       << "'; got: " << error;
}

inline ::testing::AssertionResult NotSupported(const protos::EasyRecConfig& config, const std::string& path) {
  return HasProblem(config, path, "not supported yet: " + path);
}

inline ::testing::AssertionResult NoProblems(const protos::EasyRecConfig& config) {
  const std::string error = construction_error(config);
  if (error == "(no error)") return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << error;
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

// The small input the rank-model tests share: sparse "a" (5 rows, dim 2), sparse "b" (4 rows,
// dim 2), dense "price" (1 value); B = 3 rows: a: [1], [3], [0, 4]; b: [2], [], [1];
// price: 0.5, 1, -2; label "clk": 1, 0, 1.
inline const std::vector<std::vector<int64_t>> kIdsA = {{1}, {3}, {0, 4}};
inline const std::vector<std::vector<int64_t>> kIdsB = {{2}, {}, {1}};

inline std::vector<feature::FeatureInfo> ab_price_features() {
  return {sparse_feature("a", 5, 2), sparse_feature("b", 4, 2), dense_feature("price", 1)};
}

inline sparse::Batch ab_price_batch() {
  sparse::Batch batch;
  batch.batch_size = 3;
  batch.sparse_features = make_kjt({"a", "b"}, {kIdsA, kIdsB});
  batch.dense_features = sparse::KeyedTensor::from_tensors({"price"}, {torch::tensor({{0.5f}, {1.0f}, {-2.0f}})});
  batch.labels["clk"] = torch::tensor({1.0f, 0.0f, 1.0f});
  return batch;
}

// The small sequence input the sequence-model tests share: sparse "u" (5 rows, dim 2) and a history
// "s__i" (sequence id feature, one id per item, 6 rows, dim 2); B = 2 rows: u {1}, {3}; histories
// {2, 4} and none; labels "clk" 1, 0 and "buy" 0, 1.
inline std::vector<feature::FeatureInfo> history_features() {
  feature::FeatureInfo seq = sparse_feature("s__i", 6, 2);
  seq.is_sequence = true;
  seq.value_dim = 1;
  return {sparse_feature("u", 5, 2), seq};
}

inline sparse::Batch history_batch() {
  sparse::Batch batch;
  batch.batch_size = 2;
  batch.sparse_features = make_kjt({"u", "s__i"}, {{{1}, {3}}, {{2, 4}, {}}});
  batch.sequence_lengths["s__i"] = torch::tensor({2, 0}, torch::kInt64);
  batch.labels["clk"] = torch::tensor({1.0f, 0.0f});
  batch.labels["buy"] = torch::tensor({0.0f, 1.0f});
  return batch;
}

// Table name → weight, and dense parameter name → tensor (live, not copies).
inline std::map<std::string, torch::Tensor> tables_of(Model& model) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& t : model.embedding_tables()) out[t.name] = t.weight;
  return out;
}

inline std::map<std::string, torch::Tensor> dense_of(Model& model) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [k, v] : model.dense_parameters()) out[k] = v;
  return out;
}

// After a backward: every dense parameter and every embedding table has a non-zero gradient.
inline void expect_gradients_everywhere(Model& model) {
  for (const auto& [name, p] : model.dense_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_GT(p.grad().abs().sum().item<double>(), 0.0) << name;
  }
  for (const auto& table : model.embedding_tables()) {
    ASSERT_TRUE(table.weight.grad().defined()) << table.name;
    torch::Tensor grad = table.weight.grad();
    if (grad.is_sparse()) grad = grad.to_dense();
    EXPECT_GT(grad.abs().sum().item<double>(), 0.0) << table.name;
  }
}

// What the Python references of whole models (e.g. src/models/match/hstu_match_reference.py) set:
// every dense parameter pattern(shape, 0.1 i), i its index among the dense parameter names in
// sorted order, every embedding table pattern(shape, 1 + 0.1 j) over the sorted table names.
inline void set_reference_parameters(Model& model) {
  torch::NoGradGuard no_grad;
  int i = 0;
  for (auto& [name, p] : dense_of(model)) p.copy_(nn::testing::pattern(p.sizes().vec(), 0.1 * i++));
  int j = 0;
  for (auto& [name, w] : tables_of(model)) w.copy_(nn::testing::pattern(w.sizes().vec(), 1 + 0.1 * j++));
}

// After a backward: every parameter and table of `model` has the gradient checksum
// sum(grad * pattern(grad, 1.1)) its reference printed (`want`: name → checksum), within
// 2e-5 + 1e-4 |checksum| (float32 against the references' float64), and there is no other.
inline void expect_gradient_checksums(Model& model, const std::map<std::string, double>& want) {
  std::map<std::string, torch::Tensor> params = dense_of(model);
  for (auto& [name, w] : tables_of(model)) params[name] = w;
  ASSERT_EQ(params.size(), want.size());
  for (const auto& [name, value] : want) {
    ASSERT_TRUE(params.count(name)) << name;
    ASSERT_TRUE(params[name].grad().defined()) << name;
    torch::Tensor grad = params[name].grad().is_sparse() ? params[name].grad().to_dense() : params[name].grad();
    const double got = (grad * nn::testing::pattern(grad.sizes().vec(), 1.1)).sum().item<double>();
    EXPECT_NEAR(got, value, 2e-5 + 1e-4 * std::abs(value)) << name;
  }
}

// x W^T + b with the "<prefix>.weight" / "<prefix>.bias" tensors of `p`.
inline torch::Tensor linear(const torch::Tensor& x, std::map<std::string, torch::Tensor>& p, const std::string& prefix) {
  return torch::matmul(x, p[prefix + ".weight"].t()) + p[prefix + ".bias"];
}

}  // namespace tzrec::models::testing
