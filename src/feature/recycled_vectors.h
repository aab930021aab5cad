// Vectors that parsed batches hand over to tensors come back here when their tensors are freed,
// and later batches fill them again: a batch's sparse values and weights (tens of MB with long
// sequences) then go to memory already in use instead of new pages from the system, whose faults
// and zeroing cost about as much as writing the values.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <torch/torch.h>

namespace tzrec::feature {

template <typename T>
class RecycledVectors : public std::enable_shared_from_this<RecycledVectors<T>> {
 public:
  // Keeps at most `max_kept` vectors given back (others are freed).
  static std::shared_ptr<RecycledVectors> create(size_t max_kept) {
    return std::shared_ptr<RecycledVectors>(new RecycledVectors(max_kept));
  }

  // An empty vector: the largest one given back when there is one, else a new one.
  std::vector<T> take() {
    std::lock_guard<std::mutex> lock(mu_);
    if (kept_.empty()) return {};
    auto largest = kept_.begin();
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->capacity() > largest->capacity()) largest = it;
    }
    std::vector<T> v = std::move(*largest);
    kept_.erase(largest);
    v.clear();
    return v;
  }

  // A 1-D tensor owning v's buffer (no copy); the vector comes back here when the tensor is freed,
  // from whichever thread frees it (or is freed with it once this pool is gone).
  torch::Tensor to_tensor(std::vector<T>&& v, torch::ScalarType type) {
    auto* owned = new std::vector<T>(std::move(v));
    std::weak_ptr<RecycledVectors> pool = this->shared_from_this();
    return torch::from_blob(
        owned->data(), {static_cast<int64_t>(owned->size())},
        [owned, pool](void*) {
          if (auto p = pool.lock()) p->give_back(std::move(*owned));
          delete owned;
        },
        torch::TensorOptions().dtype(type));
  }

 private:
  explicit RecycledVectors(size_t max_kept) : max_kept_(max_kept) {}

  void give_back(std::vector<T>&& v) {
    if (v.capacity() == 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (kept_.size() < max_kept_) kept_.push_back(std::move(v));
  }

  std::mutex mu_;
  std::vector<std::vector<T>> kept_;
  size_t max_kept_;
};

}  // namespace tzrec::feature
