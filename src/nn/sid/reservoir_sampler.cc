#include "nn/sid/reservoir_sampler.h"

#include <algorithm>

namespace tzrec::nn::sid {

ReservoirSampler::ReservoirSampler(int64_t capacity, int64_t dim) : capacity_(capacity), dim_(dim) {
  TORCH_CHECK(capacity >= 1 && dim >= 1, "reservoir needs capacity >= 1 and dim >= 1, got ", capacity, ", ", dim);
}

void ReservoirSampler::add(const torch::Tensor& input) {
  torch::NoGradGuard no_grad;
  TORCH_CHECK(input.dim() == 2 && input.size(1) == dim_, "reservoir rows must be [B, ", dim_, "], got ", input.sizes());
  torch::Tensor x = input.detach().to(torch::kCPU);
  if (!buffer_.defined()) buffer_ = torch::empty({capacity_, dim_}, torch::kFloat32);
  if (n_filled_ < capacity_) {
    const int64_t take = std::min(x.size(0), capacity_ - n_filled_);
    buffer_.narrow(0, n_filled_, take).copy_(x.narrow(0, 0, take).to(torch::kFloat32));
    n_filled_ += take;
    n_seen_ += take;
    x = x.narrow(0, take, x.size(0) - take);
    if (x.size(0) == 0) return;
  }
  // Row p of the stream is kept with probability capacity / (p + 1); float64 keeps p + 1 exact.
  const int64_t r = x.size(0);
  torch::Tensor pos = n_seen_ + torch::arange(r);
  torch::Tensor accept = torch::rand({r}) < (static_cast<double>(capacity_) / (pos + 1).to(torch::kFloat64));
  torch::Tensor idx = accept.nonzero().select(1, 0);
  if (idx.numel() > 0) {
    torch::Tensor slots = torch::randint(0, capacity_, {idx.numel()}, torch::kInt64);
    buffer_.index_put_({slots}, x.index_select(0, idx).to(torch::kFloat32));
  }
  n_seen_ += r;
}

torch::Tensor ReservoirSampler::sample() const {
  if (!buffer_.defined() || n_filled_ == 0) return torch::empty({0, dim_}, torch::kFloat32);
  return buffer_.narrow(0, 0, n_filled_);
}

void ReservoirSampler::reset() {
  buffer_ = torch::Tensor();
  n_filled_ = 0;
  n_seen_ = 0;
}

}  // namespace tzrec::nn::sid
