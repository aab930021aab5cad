#include "nn/sid/sinkhorn.h"

namespace tzrec::nn::sid {

torch::Tensor sinkhorn(const torch::Tensor& cost, int64_t iters, double epsilon, const Collectives& ranks) {
  torch::NoGradGuard no_grad;
  torch::Tensor q = torch::exp(-cost * epsilon).t();  // [K, B]
  const int64_t b = q.size(1) * ranks.world_size;
  const int64_t k = q.size(0);
  auto summed = [&](torch::Tensor s) {
    if (ranks.distributed()) ranks.all_reduce_sum(s);
    return s;
  };
  q = q / (summed(q.sum()) + 1e-8);
  for (int64_t i = 0; i < iters; ++i) {
    q = q / (summed(q.sum(1, /*keepdim=*/true)) + 1e-8);
    q = q / static_cast<double>(k);
    q = q / (q.sum(0, /*keepdim=*/true) + 1e-8);
    q = q / static_cast<double>(b);
  }
  q = q * static_cast<double>(b);
  return q.t();
}

torch::Tensor sinkhorn_codes(const torch::Tensor& distances, int64_t iters, double epsilon, const Collectives& ranks) {
  torch::NoGradGuard no_grad;
  auto [std_dev, mean] = torch::std_mean(distances, /*unbiased=*/false);
  torch::Tensor d = (distances - mean) / std_dev.add(1e-12);
  d = d - d.min();
  return sinkhorn(d, iters, epsilon, ranks).argmax(-1);
}

}  // namespace tzrec::nn::sid
