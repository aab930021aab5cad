#include "nn/sid/kmeans_clustering.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"

namespace tzrec::nn::sid {
namespace {

// faiss's RandomGenerator: std::mt19937 seeded with the low 32 bits of the seed.
class FaissRng {
 public:
  explicit FaissRng(int64_t seed) : mt_(static_cast<unsigned int>(seed)) {}
  int rand_int(int max) { return static_cast<int>(mt_() % static_cast<unsigned long>(max)); }
  float rand_float() { return static_cast<float>(mt_()) / static_cast<float>(std::mt19937::max()); }

 private:
  std::mt19937 mt_;
};

constexpr int64_t kKMeansSearchBlock = int64_t{1} << 24;  // distances per GEMM block of kmeans_search (64 MiB)
constexpr float kKMeansSplitEps = 1.0f / 1024.0f;

// Centroid means and cluster sizes (faiss faiss_compute_centroids without weights): sums in row order.
void faiss_compute_centroids(int64_t d, int64_t k, int64_t n, const float* x, const int64_t* assign, float* hassign,
                       float* centroids) {
  std::memset(centroids, 0, sizeof(float) * static_cast<size_t>(d * k));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t ci = assign[i];
    hassign[ci] += 1.0f;
    float* c = centroids + ci * d;
    const float* xi = x + i * d;
    for (int64_t j = 0; j < d; ++j) c[j] += xi[j];
  }
  for (int64_t ci = 0; ci < k; ++ci) {
    if (hassign[ci] == 0) continue;
    const float norm = 1 / hassign[ci];
    float* c = centroids + ci * d;
    for (int64_t j = 0; j < d; ++j) c[j] *= norm;
  }
}

// faiss faiss_split_clusters: every empty cluster takes half of a donor's rows.
int faiss_split_clusters(int64_t d, int64_t k, int64_t n, float* hassign, float* centroids) {
  int nsplit = 0;
  FaissRng rng(1234);
  for (int64_t ci = 0; ci < k; ++ci) {
    if (hassign[ci] != 0) continue;
    int64_t cj = 0;
    const int64_t max_tries = 10 * k;
    int64_t tries = 0;
    bool found = false;
    for (cj = 0; tries < max_tries; cj = (cj + 1) % k) {
      const float p = static_cast<float>((hassign[cj] - 1.0) / static_cast<float>(n - k));
      const float r = rng.rand_float();
      if (r < p) {
        found = true;
        break;
      }
      ++tries;
    }
    if (!found) {
      cj = 0;
      for (int64_t j = 1; j < k; ++j) {
        if (hassign[j] > hassign[cj]) cj = j;
      }
    }
    std::memcpy(centroids + ci * d, centroids + cj * d, sizeof(float) * static_cast<size_t>(d));
    for (int64_t j = 0; j < d; ++j) {
      if (j % 2 == 0) {
        centroids[ci * d + j] *= 1 + kKMeansSplitEps;
        centroids[cj * d + j] *= 1 - kKMeansSplitEps;
      } else {
        centroids[ci * d + j] *= 1 - kKMeansSplitEps;
        centroids[cj * d + j] *= 1 + kKMeansSplitEps;
      }
    }
    hassign[ci] = hassign[cj] / 2;
    hassign[cj] -= hassign[ci];
    ++nsplit;
  }
  return nsplit;
}

// faiss fvec_renorm_L2 (spherical k-means): rows scaled to unit length.
void faiss_renorm_l2(int64_t d, int64_t k, float* centroids) {
  for (int64_t i = 0; i < k; ++i) {
    float* c = centroids + i * d;
    float nr = 0;
    for (int64_t j = 0; j < d; ++j) nr += c[j] * c[j];
    if (nr > 0) {
      const float inv = static_cast<float>(1.0 / std::sqrt(nr));
      for (int64_t j = 0; j < d; ++j) c[j] *= inv;
    }
  }
}

double faiss_imbalance_factor(int64_t n, int64_t k, const int64_t* assign) {
  std::vector<double> hist(static_cast<size_t>(k), 0.0);
  for (int64_t i = 0; i < n; ++i) hist[static_cast<size_t>(assign[i])] += 1;
  double tot = 0, uf = 0;
  for (double h : hist) {
    tot += h;
    uf += h * h;
  }
  return uf * static_cast<double>(k) / (tot * tot);
}

}  // namespace

std::vector<int> faiss_rand_perm(int64_t n, int64_t seed) {
  std::vector<int> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[static_cast<size_t>(i)] = static_cast<int>(i);
  FaissRng rng(seed);
  for (int64_t i = 0; i + 1 < n; ++i) {
    const int64_t i2 = i + rng.rand_int(static_cast<int>(n - i));
    std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(i2)]);
  }
  return perm;
}

std::pair<torch::Tensor, torch::Tensor> kmeans_search(const torch::Tensor& x, const torch::Tensor& centroids,
                                                      bool inner_product) {
  torch::NoGradGuard no_grad;
  const int64_t n = x.size(0);
  torch::Tensor ids = torch::empty({n}, torch::kInt64);
  torch::Tensor dis = torch::empty({n}, torch::kFloat32);
  const torch::Tensor c = centroids.to(torch::kFloat32).contiguous();
  const torch::Tensor c_norms = c.pow(2).sum(1);  // [k]
  const int64_t chunk = std::max<int64_t>(1, kKMeansSearchBlock / std::max<int64_t>(1, c.size(0)));
  for (int64_t start = 0; start < n; start += chunk) {
    const int64_t rows = std::min(chunk, n - start);
    const torch::Tensor xb = x.narrow(0, start, rows).to(torch::kFloat32);
    const torch::Tensor ip = torch::mm(xb, c.t());  // [rows, k]
    if (inner_product) {
      auto [best, arg] = ip.max(1);
      dis.narrow(0, start, rows).copy_(best);
      ids.narrow(0, start, rows).copy_(arg);
    } else {
      const torch::Tensor d2 = (xb.pow(2).sum(1, /*keepdim=*/true) + c_norms.unsqueeze(0) - 2 * ip).clamp_min(0);
      auto [best, arg] = d2.min(1);
      dis.narrow(0, start, rows).copy_(best);
      ids.narrow(0, start, rows).copy_(arg);
    }
  }
  return {ids, dis};
}

KMeansResult kmeans_fit(const torch::Tensor& input, int64_t k, const KMeansOptions& options) {
  torch::NoGradGuard no_grad;
  TORCH_CHECK(input.dim() == 2 && k >= 1 && input.size(0) >= k, "k-means of ", k, " clusters on rows ", input.sizes());
  TORCH_CHECK(options.seed >= 0 && options.max_points_per_centroid >= 1, "k-means options");
  const torch::Tensor x_in = input.to(torch::kFloat32).contiguous();
  if (!torch::isfinite(x_in).all().item<bool>()) {
    throw DataError("k-means input contains NaN or Inf values");
  }
  const int64_t d = x_in.size(1);
  int64_t n = x_in.size(0);
  torch::Tensor x = x_in;
  if (n > k * options.max_points_per_centroid) {
    if (options.verbose) log::info("Sampling a subset of {} / {} for training", k * options.max_points_per_centroid, n);
    const std::vector<int> perm = faiss_rand_perm(n, options.seed);
    n = k * options.max_points_per_centroid;
    const torch::Tensor rows = torch::tensor(std::vector<int64_t>(perm.begin(), perm.begin() + n), torch::kInt64);
    x = x_in.index_select(0, rows).contiguous();
  } else if (n < k * options.min_points_per_centroid) {
    log::warning("clustering {} points to {} centroids: please provide at least {} training points", n, k,
                 k * options.min_points_per_centroid);
  }
  KMeansResult result;
  if (n == k) {
    if (options.verbose) log::info("Number of training points ({}) same as number of clusters, just copying", n);
    result.centroids = x_in.narrow(0, 0, k).clone();
    result.objective.push_back(0.0f);
    return result;
  }
  if (options.verbose) {
    log::info("Clustering {} points in {}D to {} clusters, redo {} times, {} iterations", n, d, k, options.nredo,
              options.niter);
  }
  const float* xp = x.data_ptr<float>();
  const bool lower_is_better = !options.spherical;
  float best_obj = lower_is_better ? HUGE_VALF : -HUGE_VALF;
  std::vector<float> best_centroids;
  std::vector<float> best_objective;
  std::vector<float> centroids(static_cast<size_t>(k * d));
  std::vector<float> hassign(static_cast<size_t>(k));
  for (int64_t redo = 0; redo < options.nredo; ++redo) {
    if (options.verbose && options.nredo > 1) log::info("Outer iteration {} / {}", redo, options.nredo);
    const std::vector<int> perm = faiss_rand_perm(n, options.seed + 1 + redo * 15486557L);
    for (int64_t i = 0; i < k; ++i) {
      std::memcpy(centroids.data() + i * d, xp + static_cast<int64_t>(perm[static_cast<size_t>(i)]) * d,
                  sizeof(float) * static_cast<size_t>(d));
    }
    if (options.spherical) faiss_renorm_l2(d, k, centroids.data());
    float obj = 0;
    for (int64_t iter = 0; iter < options.niter; ++iter) {
      const torch::Tensor c = torch::from_blob(centroids.data(), {k, d}, torch::kFloat32);
      auto [assign_t, dis_t] = kmeans_search(x, c, options.spherical);
      const int64_t* assign = assign_t.data_ptr<int64_t>();
      const float* dis = dis_t.data_ptr<float>();
      obj = 0;
      for (int64_t j = 0; j < n; ++j) obj += dis[j];
      std::fill(hassign.begin(), hassign.end(), 0.0f);
      faiss_compute_centroids(d, k, n, xp, assign, hassign.data(), centroids.data());
      const int nsplit = faiss_split_clusters(d, k, n, hassign.data(), centroids.data());
      result.objective.push_back(obj);
      if (options.verbose) {
        log::info("  Iteration {}: objective={} imbalance={:.3f} nsplit={}", iter, obj, faiss_imbalance_factor(n, k, assign),
                  nsplit);
      }
      if (options.spherical) faiss_renorm_l2(d, k, centroids.data());
      if (iter > 0) {
        const float prev = result.objective[result.objective.size() - 2];
        const double change = prev == 0 ? std::numeric_limits<double>::max() : std::abs(prev - obj) / std::abs(prev);
        if (change <= 0.0) {
          if (options.verbose) log::info("  Converged at iteration {}: objective did not change", iter);
          break;
        }
      }
    }
    if (options.nredo > 1) {
      if ((lower_is_better && obj < best_obj) || (!lower_is_better && obj > best_obj)) {
        if (options.verbose) log::info("Objective improved: keep new clusters");
        best_centroids = centroids;
        best_objective = result.objective;
        best_obj = obj;
      }
    }
  }
  if (options.nredo > 1) {
    centroids = best_centroids;
    result.objective = best_objective;
  }
  result.centroids = torch::from_blob(centroids.data(), {k, d}, torch::kFloat32).clone();
  return result;
}

}  // namespace tzrec::nn::sid
