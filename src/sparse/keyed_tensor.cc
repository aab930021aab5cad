#include "sparse/keyed_tensor.h"

#include <stdexcept>

namespace tzrec::sparse {

KeyedTensor::KeyedTensor(std::vector<std::string> keys, std::vector<int64_t> length_per_key,
                         torch::Tensor values)
    : keys_(std::move(keys)), length_per_key_(std::move(length_per_key)), values_(std::move(values)) {
  TORCH_CHECK(keys_.size() == length_per_key_.size(), "KeyedTensor keys and lengths differ in count");
  offset_per_key_.assign(keys_.size() + 1, 0);
  for (size_t k = 0; k < keys_.size(); ++k) {
    offset_per_key_[k + 1] = offset_per_key_[k] + length_per_key_[k];
    TORCH_CHECK(index_.emplace(keys_[k], static_cast<int64_t>(k)).second, "duplicate key ", keys_[k]);
  }
  if (!keys_.empty()) {
    TORCH_CHECK(values_.dim() == 2 && values_.size(1) == offset_per_key_.back(),
                "KeyedTensor values must be [B, ", offset_per_key_.back(), "]");
  }
}

KeyedTensor KeyedTensor::from_tensors(const std::vector<std::string>& keys,
                                      const std::vector<torch::Tensor>& tensors) {
  TORCH_CHECK(keys.size() == tensors.size(), "from_tensors: keys and tensors differ in count");
  if (keys.empty()) return KeyedTensor();
  std::vector<int64_t> dims;
  for (const auto& t : tensors) {
    TORCH_CHECK(t.dim() == 2, "KeyedTensor parts must be [B, d]");
    dims.push_back(t.size(1));
  }
  return KeyedTensor(keys, dims, torch::cat(tensors, 1));
}

torch::Tensor KeyedTensor::operator[](const std::string& key) const {
  auto it = index_.find(key);
  if (it == index_.end()) throw std::out_of_range("KeyedTensor has no key '" + key + "'");
  return values_.slice(1, offset_per_key_[it->second], offset_per_key_[it->second + 1]);
}

KeyedTensor KeyedTensor::to(const torch::Device& device) const {
  if (keys_.empty()) return *this;
  return KeyedTensor(keys_, length_per_key_, values_.to(device));
}

}  // namespace tzrec::sparse
