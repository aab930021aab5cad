#include "sparse/keyed_jagged_tensor.h"

#include <gtest/gtest.h>

#include "sparse/batch.h"
#include "sparse/keyed_tensor.h"

namespace tzrec::sparse {
namespace keyed_jagged_tensor_test {

torch::Tensor i64(std::vector<int64_t> v) { return torch::tensor(v, torch::kInt64); }

// Two keys, batch of 3:
//   a: [1, 2], [], [3]
//   b: [4], [5, 6, 7], [8]
KeyedJaggedTensor make_kjt(bool weighted) {
  auto values = i64({1, 2, 3, 4, 5, 6, 7, 8});
  auto lengths = i64({2, 0, 1, 1, 3, 1});
  torch::Tensor weights;
  if (weighted) weights = torch::arange(8, torch::kFloat32) / 10;
  return KeyedJaggedTensor({"a", "b"}, values, lengths, weights);
}

TEST(KeyedJaggedTensorTest, StrideLengthsAndOffsets) {
  auto kjt = make_kjt(false);
  EXPECT_EQ(kjt.stride(), 3);
  EXPECT_EQ(kjt.length_per_key(), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(kjt.offset_per_key(), (std::vector<int64_t>{0, 3, 8}));
  EXPECT_TRUE(torch::equal(kjt.offsets(), i64({0, 2, 2, 3, 4, 7, 8})));
  EXPECT_FALSE(kjt.has_weights());
}

TEST(KeyedJaggedTensorTest, IndexByKey) {
  auto kjt = make_kjt(true);
  auto b = kjt["b"];
  EXPECT_TRUE(torch::equal(b.values, i64({4, 5, 6, 7, 8})));
  EXPECT_TRUE(torch::equal(b.lengths, i64({1, 3, 1})));
  EXPECT_TRUE(torch::allclose(b.weights, torch::tensor({0.3f, 0.4f, 0.5f, 0.6f, 0.7f})));
  EXPECT_TRUE(torch::equal(b.offsets(), i64({0, 1, 4, 5})));
  EXPECT_THROW(kjt["missing"], std::out_of_range);
}

TEST(KeyedJaggedTensorTest, SelectReordersKeys) {
  auto kjt = make_kjt(true).select({"b", "a"});
  EXPECT_EQ(kjt.keys(), (std::vector<std::string>{"b", "a"}));
  EXPECT_TRUE(torch::equal(kjt.values(), i64({4, 5, 6, 7, 8, 1, 2, 3})));
  EXPECT_TRUE(torch::equal(kjt.lengths(), i64({1, 3, 1, 2, 0, 1})));
  ASSERT_TRUE(kjt.has_weights());
  EXPECT_NEAR(kjt.weights()[5].item<float>(), 0.0f, 1e-7);
}

TEST(KeyedJaggedTensorTest, FromJaggedFillsMissingWeightsWithOnes) {
  JaggedTensor a{i64({1}), i64({1, 0}), torch::tensor({0.5f})};
  JaggedTensor b{i64({2, 3}), i64({0, 2}), torch::Tensor()};
  auto kjt = KeyedJaggedTensor::from_jagged({"a", "b"}, {a, b});
  EXPECT_EQ(kjt.stride(), 2);
  EXPECT_TRUE(torch::allclose(kjt.weights(), torch::tensor({0.5f, 1.0f, 1.0f})));
}

TEST(KeyedJaggedTensorTest, RejectsInconsistentLengths) {
  EXPECT_THROW(KeyedJaggedTensor({"a", "b"}, i64({1, 2}), i64({1, 1, 1})), c10::Error);
  EXPECT_THROW(KeyedJaggedTensor({"a"}, i64({1, 2}), i64({1, 0})), c10::Error);
  EXPECT_THROW(KeyedJaggedTensor({"a", "a"}, i64({1, 2}), i64({1, 1})), c10::Error);
}

// Expected values: make_kjt's layout written out by hand, values mapped one for one (v -> 10 v).
TEST(KeyedJaggedTensorTest, WithValuesKeepsTheLayoutUnderNewKeys) {
  const auto kjt = make_kjt(true);
  const auto mapped = kjt.with_values({"x", "y"}, kjt.values() * 10, kjt.weights());
  EXPECT_EQ(mapped.keys(), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(mapped.stride(), 3);
  EXPECT_EQ(mapped.length_per_key(), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(mapped.offset_per_key(), (std::vector<int64_t>{0, 3, 8}));
  const auto y = mapped["y"];
  EXPECT_TRUE(torch::equal(y.values, i64({40, 50, 60, 70, 80})));
  EXPECT_TRUE(torch::equal(y.lengths, i64({1, 3, 1})));
  EXPECT_TRUE(torch::allclose(y.weights, torch::tensor({0.3f, 0.4f, 0.5f, 0.6f, 0.7f})));
  EXPECT_FALSE(mapped.contains("a"));
  EXPECT_FALSE(kjt.with_values({"x", "y"}, kjt.values()).has_weights());
  EXPECT_THROW(kjt.with_values({"x"}, kjt.values()), c10::Error);                      // one key for two
  EXPECT_THROW(kjt.with_values({"x", "y"}, i64({1, 2, 3})), c10::Error);               // 3 values for 8
  EXPECT_THROW(kjt.with_values({"x", "y"}, kjt.values(), torch::ones({2})), c10::Error);  // 2 weights
  EXPECT_THROW(kjt.with_values({"x", "x"}, kjt.values()), c10::Error);                 // duplicate key
}

TEST(KeyedTensorTest, BlocksByKey) {
  auto x = torch::arange(2, torch::kFloat32).view({2, 1});
  auto y = torch::arange(6, torch::kFloat32).view({2, 3});
  auto kt = KeyedTensor::from_tensors({"x", "y"}, {x, y});
  EXPECT_EQ(kt.values().sizes(), (std::vector<int64_t>{2, 4}));
  EXPECT_TRUE(torch::equal(kt["y"], y));
  EXPECT_TRUE(torch::equal(kt["x"], x));
  EXPECT_THROW(kt["z"], std::out_of_range);
}

TEST(BatchTest, ToDeviceKeepsEverything) {
  Batch batch;
  batch.batch_size = 3;
  batch.sparse_features = make_kjt(false);
  batch.dense_features = KeyedTensor::from_tensors({"d"}, {torch::ones({3, 2})});
  batch.labels["label"] = torch::zeros({3});
  auto moved = batch.to(torch::kCPU);
  EXPECT_EQ(moved.batch_size, 3);
  EXPECT_TRUE(torch::equal(moved.sparse_features.values(), batch.sparse_features.values()));
  EXPECT_TRUE(torch::equal(moved.dense_features["d"], torch::ones({3, 2})));
  EXPECT_EQ(moved.labels.count("label"), 1u);
}

}  // namespace keyed_jagged_tensor_test
}  // namespace tzrec::sparse
