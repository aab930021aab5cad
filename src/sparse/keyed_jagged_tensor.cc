#include "sparse/keyed_jagged_tensor.h"

#include <stdexcept>

namespace tzrec::sparse {

torch::Tensor JaggedTensor::offsets() const {
  auto out = torch::zeros({lengths.size(0) + 1}, lengths.options().dtype(torch::kInt64));
  if (lengths.numel() > 0) out.slice(0, 1).copy_(torch::cumsum(lengths, 0));
  return out;
}

KeyedJaggedTensor::KeyedJaggedTensor(std::vector<std::string> keys, torch::Tensor values,
                                     torch::Tensor lengths, torch::Tensor weights)
    : keys_(std::move(keys)),
      values_(std::move(values)),
      lengths_(std::move(lengths)),
      weights_(std::move(weights)) {
  TORCH_CHECK(lengths_.dim() == 1, "KJT lengths must be 1-D");
  const auto num_keys = static_cast<int64_t>(keys_.size());
  if (num_keys > 0) {
    TORCH_CHECK(lengths_.size(0) % num_keys == 0, "KJT lengths size ", lengths_.size(0),
                " is not a multiple of the number of keys ", num_keys);
    stride_ = lengths_.size(0) / num_keys;
  }
  if (weights_.defined()) {
    TORCH_CHECK(weights_.size(0) == values_.size(0), "KJT weights and values differ in size");
  }
  build_index();
}

void KeyedJaggedTensor::build_index() {
  const auto num_keys = static_cast<int64_t>(keys_.size());
  length_per_key_.assign(num_keys, 0);
  offset_per_key_.assign(num_keys + 1, 0);
  if (num_keys > 0 && stride_ > 0) {
    if (lengths_.device().is_cpu()) {
      // A plain loop: a reduction on torch's thread pool waits for a busy second core (ms per
      // batch on a loaded machine, bench/README.md dynamic_embedding_bench).
      const torch::Tensor all = lengths_.to(torch::kInt64).contiguous();
      TORCH_CHECK(all.numel() == num_keys * stride_, "KJT lengths have ", all.numel(), " entries, expected ",
                  num_keys, " keys x stride ", stride_);
      const int64_t* l = all.data_ptr<int64_t>();
      for (int64_t k = 0; k < num_keys; ++k) {
        int64_t sum = 0;
        for (int64_t b = 0; b < stride_; ++b) sum += l[k * stride_ + b];
        length_per_key_[k] = sum;
      }
    } else {
      auto per_key = lengths_.view({num_keys, stride_}).sum(1).to(torch::kCPU).contiguous();
      const int64_t* p = per_key.data_ptr<int64_t>();
      for (int64_t k = 0; k < num_keys; ++k) length_per_key_[k] = p[k];
    }
    for (int64_t k = 0; k < num_keys; ++k) offset_per_key_[k + 1] = offset_per_key_[k] + length_per_key_[k];
  }
  TORCH_CHECK(offset_per_key_.back() == (values_.defined() ? values_.size(0) : 0),
              "KJT lengths sum ", offset_per_key_.back(), " does not match values size");
  build_key_index();
}

void KeyedJaggedTensor::build_key_index() {
  index_.clear();
  for (size_t k = 0; k < keys_.size(); ++k) {
    TORCH_CHECK(index_.emplace(keys_[k], static_cast<int64_t>(k)).second, "duplicate KJT key ", keys_[k]);
  }
}

KeyedJaggedTensor KeyedJaggedTensor::with_values(std::vector<std::string> keys, torch::Tensor values,
                                                 torch::Tensor weights) const {
  TORCH_CHECK(keys.size() == keys_.size(), "KJT with_values: ", keys.size(), " keys for ", keys_.size());
  const int64_t entries = values_.defined() ? values_.size(0) : 0;
  TORCH_CHECK(values.dim() == 1 && values.size(0) == entries, "KJT with_values: values of ", values.numel(),
              " entries for ", entries);
  TORCH_CHECK(!weights.defined() || weights.size(0) == entries, "KJT with_values: weights of ", weights.numel(),
              " entries for ", entries);
  KeyedJaggedTensor out;
  out.keys_ = std::move(keys);
  out.values_ = std::move(values);
  out.lengths_ = lengths_;
  out.weights_ = std::move(weights);
  out.stride_ = stride_;
  out.length_per_key_ = length_per_key_;
  out.offset_per_key_ = offset_per_key_;
  out.build_key_index();
  return out;
}

KeyedJaggedTensor KeyedJaggedTensor::from_jagged(const std::vector<std::string>& keys,
                                                 const std::vector<JaggedTensor>& jagged) {
  TORCH_CHECK(keys.size() == jagged.size(), "from_jagged: keys and tensors differ in count");
  if (keys.empty()) {
    return KeyedJaggedTensor({}, torch::empty({0}, torch::kInt64), torch::empty({0}, torch::kInt64));
  }
  bool weighted = false;
  for (const auto& j : jagged) weighted = weighted || j.weights.defined();
  std::vector<torch::Tensor> values, lengths, weights;
  for (const auto& j : jagged) {
    TORCH_CHECK(j.lengths.size(0) == jagged[0].lengths.size(0), "from_jagged: batch sizes differ");
    values.push_back(j.values);
    lengths.push_back(j.lengths);
    if (weighted) {
      weights.push_back(j.weights.defined() ? j.weights
                                            : torch::ones({j.values.size(0)}, torch::kFloat32));
    }
  }
  return KeyedJaggedTensor(keys, torch::cat(values), torch::cat(lengths),
                           weighted ? torch::cat(weights) : torch::Tensor());
}

torch::Tensor KeyedJaggedTensor::offsets() const {
  auto out = torch::zeros({lengths_.size(0) + 1}, lengths_.options());
  if (lengths_.numel() > 0) out.slice(0, 1).copy_(torch::cumsum(lengths_, 0));
  return out;
}

int64_t KeyedJaggedTensor::key_index(const std::string& key) const {
  auto it = index_.find(key);
  if (it == index_.end()) throw std::out_of_range("KeyedJaggedTensor has no key '" + key + "'");
  return it->second;
}

JaggedTensor KeyedJaggedTensor::operator[](const std::string& key) const {
  const int64_t k = key_index(key);
  JaggedTensor out;
  out.lengths = lengths_.slice(0, k * stride_, (k + 1) * stride_);
  out.values = values_.slice(0, offset_per_key_[k], offset_per_key_[k + 1]);
  if (weights_.defined()) out.weights = weights_.slice(0, offset_per_key_[k], offset_per_key_[k + 1]);
  return out;
}

KeyedJaggedTensor KeyedJaggedTensor::select(const std::vector<std::string>& keys) const {
  std::vector<JaggedTensor> parts;
  parts.reserve(keys.size());
  for (const auto& key : keys) parts.push_back((*this)[key]);
  if (keys.empty()) {
    return KeyedJaggedTensor({}, values_.new_empty({0}), lengths_.new_empty({0}));
  }
  // Keep the weighted-ness of the parent so callers can rely on weights() being defined.
  if (weights_.defined()) {
    std::vector<torch::Tensor> v, l, w;
    for (auto& p : parts) {
      v.push_back(p.values);
      l.push_back(p.lengths);
      w.push_back(p.weights);
    }
    return KeyedJaggedTensor(keys, torch::cat(v), torch::cat(l), torch::cat(w));
  }
  return from_jagged(keys, parts);
}

KeyedJaggedTensor KeyedJaggedTensor::to(const torch::Device& device) const {
  return KeyedJaggedTensor(keys_, values_.to(device), lengths_.to(device),
                           weights_.defined() ? weights_.to(device) : torch::Tensor());
}

}  // namespace tzrec::sparse
