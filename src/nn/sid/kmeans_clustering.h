// K-means as faiss's `faiss.Kmeans(d, k, **kwargs).train(x)` computes it (faiss Clustering::train
// with an IndexFlatL2, or an IndexFlatIP when spherical), which TorchEasyRec's SID models call to
// fit their codebooks (tzrec/modules/sid/kmeans_quantize.py faiss_kmeans_fit). Written here from
// faiss's algorithm, with its defaults and random streams:
//
//   - n > k · max_points_per_centroid: the training set is k · max_points_per_centroid rows picked
//     by faiss's rand_perm(n, seed) (a Fisher-Yates shuffle driven by std::mt19937(seed), whose
//     first rows are taken); n < k · min_points_per_centroid only logs a warning; n == k: the
//     centroids are the rows themselves.
//   - per redo r (nredo times): the initial centroids are rows perm[0..k) of
//     rand_perm(n, seed + 1 + r · 15486557); then niter rounds of: assign every row to its nearest
//     centroid (L2, or the largest inner product when spherical), objective = Σ distances
//     (float32), centroids = float32 means of their rows in row order, each empty cluster split
//     from a donor cluster cj picked by faiss's std::mt19937(1234) stream with probability
//     (|cj| − 1) / (n − k) (its centroid copied and both perturbed by ±1/1024 in alternating
//     coordinates, the rows shared evenly; after 10 · k failed draws the largest cluster), and with
//     spherical every centroid renormalised to unit length. A round whose objective equals the
//     previous one's ends the redo (faiss's early stop with its default threshold 0). With
//     nredo > 1 the centroids of the best final objective are kept (lowest L2, highest inner
//     product).
//
// Numeric difference from faiss: distances come from libtorch's GEMM as ‖x‖² + ‖c‖² − 2·x·c
// (clamped at 0), as faiss's BLAS path computes them, but with another summation order (and faiss
// computes them directly below 20 query rows), so rows almost equidistant from two centroids may
// be assigned differently; centroid means are summed in the same order as faiss's.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <torch/torch.h>

namespace tzrec::nn::sid {

// faiss ClusteringParameters (their defaults).
struct KMeansOptions {
  int64_t niter = 25;
  int64_t nredo = 1;
  bool verbose = false;  // log the setup and every iteration
  bool spherical = false;
  int64_t min_points_per_centroid = 39;
  int64_t max_points_per_centroid = 256;
  int64_t seed = 1234;  // ≥ 0 (faiss seeds from the clock for negative values; not offered here)
};

struct KMeansResult {
  torch::Tensor centroids;       // [k, d] float32
  std::vector<float> objective;  // per iteration (faiss iteration_stats[i].obj), over all redos kept
};

// x: [n, d] float32 CPU, n ≥ k ≥ 1 (TORCH_CHECK: callers check the row count with their own
// message). Throws tzrec::DataError when x holds NaN or Inf (faiss refuses them too).
KMeansResult kmeans_fit(const torch::Tensor& x, int64_t k, const KMeansOptions& options);

// What faiss's index.search(x, 1) on the fitted centroids returns: (ids [n] int64, distances [n]
// float32) of each row's nearest centroid: squared L2, or with `inner_product` the largest
// x · c (IndexFlatIP, faiss.Kmeans' index when spherical). Ties go to the lowest id.
std::pair<torch::Tensor, torch::Tensor> kmeans_search(const torch::Tensor& x, const torch::Tensor& centroids,
                                                      bool inner_product);

// faiss's rand_perm(n, seed): exposed for tests.
std::vector<int> faiss_rand_perm(int64_t n, int64_t seed);

}  // namespace tzrec::nn::sid
