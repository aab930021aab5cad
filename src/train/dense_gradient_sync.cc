#include "train/dense_gradient_sync.h"

#include "base/logging.h"

namespace tzrec::train {

namespace {

constexpr const char* kWhat = "dense gradients";

}  // namespace

DenseGradientSync::DenseGradientSync(std::shared_ptr<dist::ProcessGroup> pg, std::vector<torch::Tensor> params,
                                     int64_t bucket_bytes, int64_t first_bucket_bytes)
    : pg_(std::move(pg)), params_(std::move(params)) {
  slot_of_.resize(params_.size());
  has_gradient_.assign(params_.size(), false);
  int64_t bytes = 0;
  for (size_t k = params_.size(); k-- > 0;) {  // reverse: the order backward produces gradients
    const int64_t b = params_[k].numel() * 4;
    const int64_t cap = buckets_.size() <= 1 ? first_bucket_bytes : bucket_bytes;
    if (buckets_.empty() || (bytes > 0 && bytes + b > cap)) {
      buckets_.emplace_back();
      bytes = 0;
    }
    Bucket& bucket = buckets_.back();
    slot_of_[k] = {buckets_.size() - 1, bucket.params.size()};
    bucket.offsets.push_back(bytes / 4);
    bucket.params.push_back(k);
    bytes += b;
  }
  for (Bucket& bucket : buckets_) {
    int64_t numel = 0;
    for (size_t k : bucket.params) numel += params_[k].numel();
    bucket.flat = torch::zeros({numel}, torch::kFloat32);
  }
  if (!distributed()) return;
  for (size_t k = 0; k < params_.size(); ++k) {
    if (!params_[k].requires_grad()) continue;  // never gets a gradient: zeros in finish()
    hooks_.emplace_back(k, params_[k].register_hook([this, k](const torch::Tensor& grad) { on_gradient(k, grad); }));
  }
}

DenseGradientSync::~DenseGradientSync() {
  for (const auto& [k, handle] : hooks_) params_[k].remove_hook(handle);
}

void DenseGradientSync::prepare_for_backward() {
  if (!distributed()) return;
  for (Bucket& bucket : buckets_) {
    bucket.pending = dist::PendingCollective();  // a leftover of a failed step is waited for
    bucket.ready = 0;
    bucket.started = false;
  }
  has_gradient_.assign(params_.size(), false);
  next_bucket_ = 0;
  armed_ = true;
}

void DenseGradientSync::on_gradient(size_t param, const torch::Tensor& grad) {
  if (!armed_ || has_gradient_[param] || !grad.defined()) return;
  torch::NoGradGuard no_grad;
  const auto [b, i] = slot_of_[param];
  Bucket& bucket = buckets_[b];
  const torch::Tensor& p = params_[param];
  torch::Tensor slot = bucket.flat.narrow(0, bucket.offsets[i], p.numel());
  slot.copy_(grad.reshape({-1}));
  // Autograd adds this gradient to what .grad holds (earlier micro-batches of an accumulation).
  if (p.grad().defined()) slot.add_(p.grad().reshape({-1}));
  has_gradient_[param] = true;
  ++bucket.ready;
  start_ready_buckets();
}

void DenseGradientSync::start_ready_buckets() {
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].ready == buckets_[next_bucket_].params.size()) {
    Bucket& bucket = buckets_[next_bucket_++];
    bucket.pending = pg_->all_reduce_async(bucket.flat, dist::ReduceOp::kSum, kWhat);
    bucket.started = true;
  }
}

void DenseGradientSync::fill_from_grad(size_t param) {
  const auto [b, i] = slot_of_[param];
  Bucket& bucket = buckets_[b];
  const torch::Tensor& p = params_[param];
  torch::Tensor slot = bucket.flat.narrow(0, bucket.offsets[i], p.numel());
  if (p.grad().defined()) {
    slot.copy_(p.grad().reshape({-1}));
  } else {
    slot.zero_();
  }
  has_gradient_[param] = true;
  ++bucket.ready;
}

void DenseGradientSync::finish() {
  if (!distributed()) return;
  torch::NoGradGuard no_grad;
  const bool armed = armed_;
  if (!armed_) prepare_for_backward();
  armed_ = false;
  overlapped_ = static_cast<int64_t>(next_bucket_);
  if (armed && !reported_) {
    reported_ = true;
    log::info("dense gradients: {} all-reduce bucket(s), {} started during backward", buckets_.size(), overlapped_);
  }
  for (size_t k = 0; k < params_.size(); ++k) {
    if (!has_gradient_[k]) fill_from_grad(k);
  }
  start_ready_buckets();
  const double inv_world = 1.0 / pg_->world_size();
  for (Bucket& bucket : buckets_) {
    bucket.pending.wait();
    bucket.flat.mul_(inv_world);
    for (size_t i = 0; i < bucket.params.size(); ++i) {
      torch::Tensor& p = params_[bucket.params[i]];
      torch::Tensor mean = bucket.flat.narrow(0, bucket.offsets[i], p.numel()).view_as(p);
      if (p.grad().defined()) {
        p.mutable_grad().copy_(mean);
      } else {
        p.mutable_grad() = mean.clone();
      }
    }
  }
}

void DenseGradientSync::broadcast_parameters() {
  if (!distributed()) return;
  torch::NoGradGuard no_grad;
  for (const Bucket& bucket : buckets_) {
    std::vector<torch::Tensor> values;
    for (size_t k : bucket.params) values.push_back(params_[k].detach().reshape({-1}).to(torch::kFloat32));
    torch::Tensor flat = torch::cat(values);
    pg_->broadcast(flat, 0, "initial dense parameters");
    for (size_t i = 0; i < bucket.params.size(); ++i) {
      torch::Tensor& p = params_[bucket.params[i]];
      p.copy_(flat.narrow(0, bucket.offsets[i], p.numel()).view_as(p));
    }
  }
}

}  // namespace tzrec::train
