// KeyedJaggedTensor (TorchRec layout): for F keys and a batch of B rows,
//   values:  [sum over keys and rows of L] int64, key-major (all rows of key 0, then key 1, ...)
//   lengths: [F * B] int64, key-major
//   weights: [same as values] float32, or undefined when no feature is weighted
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include <torch/torch.h>

#include "sparse/jagged_tensor.h"

namespace tzrec::sparse {

class KeyedJaggedTensor {
 public:
  KeyedJaggedTensor() = default;
  KeyedJaggedTensor(std::vector<std::string> keys, torch::Tensor values, torch::Tensor lengths,
                    torch::Tensor weights = {});

  // Concatenates per-key jagged tensors (all with the same batch size).
  static KeyedJaggedTensor from_jagged(const std::vector<std::string>& keys,
                                       const std::vector<JaggedTensor>& jagged);

  const std::vector<std::string>& keys() const { return keys_; }
  const torch::Tensor& values() const { return values_; }
  const torch::Tensor& lengths() const { return lengths_; }
  const torch::Tensor& weights() const { return weights_; }
  bool has_weights() const { return weights_.defined(); }
  int64_t stride() const { return stride_; }  // batch size B
  bool empty() const { return keys_.empty(); }

  // [F * B + 1] int64 exclusive prefix sum of lengths.
  torch::Tensor offsets() const;
  // Number of values per key, and where each key starts in values().
  const std::vector<int64_t>& length_per_key() const { return length_per_key_; }
  const std::vector<int64_t>& offset_per_key() const { return offset_per_key_; }

  bool contains(const std::string& key) const { return index_.count(key) > 0; }
  int64_t key_index(const std::string& key) const;  // throws std::out_of_range naming the key
  JaggedTensor operator[](const std::string& key) const;

  // Sub-KJT with the given keys, in that order.
  KeyedJaggedTensor select(const std::vector<std::string>& keys) const;

  // These lengths under other keys (one per key, in order) with other values and weights of as
  // many entries — a KJT mapped value by value — keeping the per-key counts instead of summing the
  // lengths again. TORCH_CHECK on a different number of keys or entries.
  KeyedJaggedTensor with_values(std::vector<std::string> keys, torch::Tensor values,
                                torch::Tensor weights = {}) const;

  KeyedJaggedTensor to(const torch::Device& device) const;

 private:
  void build_index();
  void build_key_index();

  std::vector<std::string> keys_;
  torch::Tensor values_;
  torch::Tensor lengths_;
  torch::Tensor weights_;
  int64_t stride_ = 0;
  std::vector<int64_t> length_per_key_;
  std::vector<int64_t> offset_per_key_;
  std::unordered_map<std::string, int64_t> index_;
};

}  // namespace tzrec::sparse
