#include "train/dense_gradient_sync.h"

namespace tzrec::train {

DenseGradientSync::DenseGradientSync(std::shared_ptr<dist::ProcessGroup> pg, std::vector<torch::Tensor> params,
                                     int64_t bucket_bytes)
    : pg_(std::move(pg)), params_(std::move(params)) {
  int64_t bytes = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    const int64_t b = params_[i].numel() * static_cast<int64_t>(params_[i].element_size());
    if (buckets_.empty() || (bytes > 0 && bytes + b > bucket_bytes)) {
      buckets_.emplace_back();
      bytes = 0;
    }
    buckets_.back().push_back(i);
    bytes += b;
  }
}

void DenseGradientSync::sync() {
  if (pg_ == nullptr || pg_->world_size() == 1) return;
  torch::NoGradGuard no_grad;
  const double inv_world = 1.0 / pg_->world_size();
  for (const auto& bucket : buckets_) {
    std::vector<torch::Tensor> grads;
    for (size_t i : bucket) {
      torch::Tensor& p = params_[i];
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
      grads.push_back(p.grad().reshape({-1}).to(torch::kFloat32));
    }
    torch::Tensor flat = torch::cat(grads);
    pg_->all_reduce(flat, dist::ReduceOp::kSum, "dense gradients");
    flat.mul_(inv_world);
    int64_t offset = 0;
    for (size_t i : bucket) {
      torch::Tensor& g = params_[i].mutable_grad();
      g.copy_(flat.narrow(0, offset, g.numel()).view_as(g));
      offset += g.numel();
    }
  }
}

void DenseGradientSync::broadcast_parameters() {
  if (pg_ == nullptr || pg_->world_size() == 1) return;
  torch::NoGradGuard no_grad;
  for (const auto& bucket : buckets_) {
    std::vector<torch::Tensor> values;
    for (size_t i : bucket) values.push_back(params_[i].detach().reshape({-1}).to(torch::kFloat32));
    torch::Tensor flat = torch::cat(values);
    pg_->broadcast(flat, 0, "initial dense parameters");
    int64_t offset = 0;
    for (size_t i : bucket) {
      torch::Tensor& p = params_[i];
      p.copy_(flat.narrow(0, offset, p.numel()).view_as(p));
      offset += p.numel();
    }
  }
}

}  // namespace tzrec::train
