// KeyedTensor: dense per-key blocks concatenated along dim 1: values [B, sum(length_per_key)].
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include <torch/torch.h>

namespace tzrec::sparse {

class KeyedTensor {
 public:
  KeyedTensor() = default;
  KeyedTensor(std::vector<std::string> keys, std::vector<int64_t> length_per_key, torch::Tensor values);
  // Concatenates [B, d_i] tensors along dim 1.
  static KeyedTensor from_tensors(const std::vector<std::string>& keys,
                                  const std::vector<torch::Tensor>& tensors);

  const std::vector<std::string>& keys() const { return keys_; }
  const std::vector<int64_t>& length_per_key() const { return length_per_key_; }
  const torch::Tensor& values() const { return values_; }
  bool empty() const { return keys_.empty(); }
  bool contains(const std::string& key) const { return index_.count(key) > 0; }
  // [B, d_key] view of one key's block; throws std::out_of_range naming the key.
  torch::Tensor operator[](const std::string& key) const;
  KeyedTensor to(const torch::Device& device) const;

 private:
  std::vector<std::string> keys_;
  std::vector<int64_t> length_per_key_;
  std::vector<int64_t> offset_per_key_;
  torch::Tensor values_;
  std::unordered_map<std::string, int64_t> index_;
};

}  // namespace tzrec::sparse
