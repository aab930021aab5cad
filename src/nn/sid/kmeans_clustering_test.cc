// faiss's k-means as kmeans_clustering.h implements it, against sid_reference.py (src/nn/sid/: a
// separate Python port of faiss's Clustering::train with its std::mt19937 streams; its printed
// values are copied here): plain fits, training-set subsampling, spherical k-means with two
// redos, empty clusters split from donors, faiss's rand_perm; and hand-checked small cases.
#include "nn/sid/kmeans_clustering.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "nn/testing.h"

namespace tzrec::nn::sid {
namespace kmeans_clustering_test {

using nn::testing::pattern;

const torch::Tensor& centers() {
  static const torch::Tensor c = torch::tensor({{2.0f, 0.0f, 1.0f, -1.0f},
                                                {-2.0f, 1.0f, 0.0f, 0.5f},
                                                {0.0f, -2.0f, -1.0f, 1.0f},
                                                {1.5f, 1.5f, -1.5f, 0.0f},
                                                {-1.0f, -1.0f, 2.0f, 2.0f}});
  return c;
}

// Row i: centers[i % 5] + noise · pattern (clustered() of the reference script).
torch::Tensor clustered(int64_t n, double noise, double phase) {
  const torch::Tensor base = centers().index_select(0, torch::arange(n, torch::kInt64).remainder(5));
  return base + noise * pattern({n, 4}, phase);
}

void expect_fit(const KMeansResult& fit, const torch::Tensor& centroids, const std::vector<float>& objective) {
  EXPECT_TRUE(torch::allclose(fit.centroids, centroids, 1e-5, 1e-5)) << fit.centroids << "\nexpected\n" << centroids;
  ASSERT_EQ(fit.objective.size(), objective.size());
  for (size_t i = 0; i < objective.size(); ++i) EXPECT_NEAR(fit.objective[i], objective[i], 1e-4 * objective[i]);
}

TEST(KMeansClustering, RandPermIsFaiss) {
  EXPECT_EQ(faiss_rand_perm(10, 1234), (std::vector<int>{5, 4, 8, 2, 6, 9, 1, 7, 0, 3}));
  EXPECT_EQ(faiss_rand_perm(7, 1235), (std::vector<int>{6, 5, 4, 0, 3, 2, 1}));
}

TEST(KMeansClustering, MatchesThePortOfFaiss) {
  KMeansOptions o;
  o.niter = 6;
  // The third round has the objective of the second: faiss's early stop ends the fit there.
  expect_fit(
      kmeans_fit(clustered(60, 0.3, 0.7), 5, o),
      torch::tensor({1.5839972f,    1.6115193f,    -1.3760519f,  0.11960084f,   1.3931894f, 1.3934724f,  -1.5918267f,
                     -0.064697407f, -0.99770856f,  -0.66499186f, 0.33416465f,   1.1665421f, 1.5973619f,  1.5510719f,
                     -1.50213f,     -0.055044062f, 2.0050778f,   0.0076678172f, 1.0092199f, -0.99047607f})
          .reshape({5, 4}),
      {280.87793f, 153.17816f, 153.17816f});
}

TEST(KMeansClustering, SubsamplesAboveMaxPointsPerCentroid) {
  KMeansOptions o;
  o.niter = 4;
  o.max_points_per_centroid = 12;  // 60 rows > 3 · 12: the 36 rows rand_perm(60, 7) puts first
  o.seed = 7;
  expect_fit(kmeans_fit(clustered(60, 0.3, 0.7), 3, o),
             torch::tensor({-0.95868069f, -0.73205215f, 0.26795053f, 1.1549634f, 1.5093498f, 1.4994391f, -1.5103956f,
                            -0.018823363f, 1.9679201f, -0.029532459f, 0.97701168f, -1.0133327f})
                 .reshape({3, 4}),
             {171.90413f, 94.240486f, 94.240486f});
}

TEST(KMeansClustering, SphericalWithTwoRedos) {
  KMeansOptions o;
  o.niter = 5;
  o.spherical = true;
  o.nredo = 2;
  o.seed = 11;
  const KMeansResult fit = kmeans_fit(clustered(60, 0.3, 0.7), 4, o);
  expect_fit(fit,
             torch::tensor({0.57532132f, 0.57593894f, -0.58077478f, -0.00063897663f, -0.0014379501f, -0.8174938f,
                            -0.410927f, 0.40353552f, 0.81721121f, 0.0031251784f, 0.41132855f, -0.40368915f,
                            -0.68089306f, 0.0026264314f, 0.45803609f, 0.57147247f})
                 .reshape({4, 4}),
             {129.59863f, 142.68008f, 142.68008f});
  EXPECT_TRUE(torch::allclose(fit.centroids.norm(2, 1), torch::ones({4}), 1e-5));
}

TEST(KMeansClustering, SplitsEmptyClusters) {
  // 8 distinct rows, each 5 times: the random initial centroids coincide, so clusters go empty
  // and are split from donors by faiss's mt19937(1234) stream.
  const torch::Tensor x = clustered(8, 0.5, 0.1).repeat_interleave(5, 0);
  KMeansOptions o;
  o.niter = 5;
  o.seed = 5;
  expect_fit(kmeans_fit(x, 6, o),
             torch::tensor({-1.8212233f, 1.1254584f,   0.055159885f, 0.47739568f,  1.2537055f,    1.2548655f,
                            -1.710797f,  -0.14792888f, -1.0650395f,  -0.97334713f, 2.1147377f,    2.1872938f,
                            2.0249584f,  0.11322158f,  1.1861609f,   -0.76609606f, -0.097309254f, -2.158844f,
                            -1.1988796f, 0.78800219f,  2.2344999f,   0.24996793f,  1.2316039f,    -0.81810677f})
                 .reshape({6, 4}),
             {243.00885f, 63.930725f, 44.155174f, 0.73838234f, 0.73838234f});
}

TEST(KMeansClustering, HandCheckedCases) {
  // Two groups on a line: from any two starting rows the centroids end at the group means.
  const torch::Tensor x = torch::tensor({{0.0f, 0.0f}, {1.0f, 0.0f}, {10.0f, 0.0f}, {11.0f, 0.0f}});
  KMeansOptions o;
  o.min_points_per_centroid = 1;
  for (int64_t seed : {0, 1, 2, 3, 4, 5}) {
    o.seed = seed;
    const KMeansResult fit = kmeans_fit(x, 2, o);
    const torch::Tensor sorted = std::get<0>(fit.centroids.select(1, 0).sort());
    EXPECT_TRUE(torch::equal(sorted, torch::tensor({0.5f, 10.5f}))) << fit.centroids;
    EXPECT_TRUE(torch::equal(fit.centroids.select(1, 1), torch::zeros({2})));
    EXPECT_FLOAT_EQ(fit.objective.back(), 1.0f);  // every row 0.5 away
  }
  // As many rows as clusters: the rows themselves.
  EXPECT_TRUE(torch::equal(kmeans_fit(x.narrow(0, 0, 2), 2, o).centroids, x.narrow(0, 0, 2)));
  // Search: nearest by L2, or the largest inner product.
  const torch::Tensor c = torch::tensor({{1.0f, 0.0f}, {0.0f, 3.0f}});
  auto [l2_ids, l2_dis] = kmeans_search(torch::tensor({{0.9f, 0.1f}, {0.0f, 1.0f}}), c, false);
  EXPECT_TRUE(torch::equal(l2_ids, torch::tensor({0, 0}, torch::kInt64)));
  EXPECT_TRUE(torch::allclose(l2_dis, torch::tensor({0.02f, 2.0f})));
  auto [ip_ids, ip_dis] = kmeans_search(torch::tensor({{0.9f, 0.1f}, {0.0f, 1.0f}}), c, true);
  EXPECT_TRUE(torch::equal(ip_ids, torch::tensor({0, 1}, torch::kInt64)));
  EXPECT_TRUE(torch::allclose(ip_dis, torch::tensor({0.9f, 3.0f})));
}

TEST(KMeansClustering, RefusesNonFiniteRows) {
  torch::Tensor x = clustered(10, 0.1, 0.0);
  x[3][1] = std::nanf("");
  EXPECT_THROW(kmeans_fit(x, 2, KMeansOptions{}), DataError);
}

}  // namespace kmeans_clustering_test
}  // namespace tzrec::nn::sid
