// ResidualKMeansQuantizer against sid_reference.py (src/nn/sid/: its port of faiss's k-means and
// the residual walk; its printed values are copied here): train_offline's centroids with and
// without normalized residuals, the codes of the fitted quantizer, the pre-fit behaviour,
// candidates, and the row-count rule.
#include "nn/sid/residual_kmeans_quantizer.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "nn/testing.h"

namespace tzrec::nn::sid {
namespace residual_kmeans_quantizer_test {

using nn::testing::pattern;

// clustered(60, 0.3, 0.7) of the reference.
torch::Tensor rows() {
  const torch::Tensor c = torch::tensor({{2.0f, 0.0f, 1.0f, -1.0f},
                                         {-2.0f, 1.0f, 0.0f, 0.5f},
                                         {0.0f, -2.0f, -1.0f, 1.0f},
                                         {1.5f, 1.5f, -1.5f, 0.0f},
                                         {-1.0f, -1.0f, 2.0f, 2.0f}});
  return c.index_select(0, torch::arange(60, torch::kInt64).remainder(5)) + 0.3 * pattern({60, 4}, 0.7);
}

ResidualKMeansQuantizerOptions options(bool normalize) {
  ResidualKMeansQuantizerOptions o;
  o.embed_dim = 4;
  o.n_embed = {5, 3};
  o.normalize_residuals = normalize;
  o.kmeans.niter = 6;
  o.kmeans.seed = 42;
  return o;
}

const torch::Tensor& centroids(const ResidualKMeansQuantizer& q, size_t i) {
  return static_cast<KMeansQuantizeLayerImpl&>(q->layer(i)).centroids;
}

TEST(ResidualKMeansQuantizer, StateNamesAndPreFit) {
  ResidualKMeansQuantizer q(options(false));
  EXPECT_EQ(nn::testing::names(q->named_buffers()),
            (std::vector<std::string>{"layers.0.centroids", "layers.0._is_initialized", "layers.1.centroids",
                                      "layers.1._is_initialized"}));
  EXPECT_TRUE(q->named_parameters().is_empty());
  EXPECT_FALSE(q->is_fitted());
  q->eval();
  const ResidualQuantizerOutput out = q->forward(rows().narrow(0, 0, 4));
  EXPECT_TRUE(torch::equal(out.cluster_ids, torch::zeros({4, 2}, torch::kInt64)));
  EXPECT_TRUE(torch::equal(out.quantized_embeddings, torch::zeros({4, 4})));
  EXPECT_FALSE(out.latents.defined());
  EXPECT_EQ(q->default_fit_sample_size(), 5 * 256);
}

TEST(ResidualKMeansQuantizer, TrainOfflineMatchesTheReference) {
  for (bool normalize : {false, true}) {
    SCOPED_TRACE(normalize);
    ResidualKMeansQuantizer q(options(normalize));
    const torch::Tensor x = rows();
    const torch::Tensor copy = x.clone();
    q->train_offline(x, /*verbose=*/false);
    EXPECT_TRUE(torch::equal(x, copy));  // the input is left alone
    EXPECT_TRUE(q->is_fitted());
    const torch::Tensor c0 =
        normalize ? torch::tensor({0.57297897f, 0.57379538f,    -0.58031321f, -0.00088591425f, -0.86719477f,
                                   0.43920082f, 0.0015968345f,  0.21760842f,  0.8143515f,      0.0015742377f,
                                   0.40953827f, -0.4037976f,    -0.31469789f, -0.31403291f,    0.63184643f,
                                   0.63214684f, 0.00013851872f, -0.81459922f, -0.40881485f,    0.40403819f})
                  : torch::tensor({1.4908209f, 1.4924214f,    -1.5049523f,  -0.0016557699f, -1.991461f,
                                   1.0063987f, 0.0033919904f, 0.49992639f,  2.0050778f,     0.0076678172f,
                                   1.0092199f, -0.99047607f,  -0.99813521f, -0.99486685f,   2.0077066f,
                                   2.0092373f, -0.003529394f, -2.0065076f,  -1.0086048f,    0.99046266f});
    const torch::Tensor c1 =
        normalize ? torch::tensor({-0.35883278f, -0.46532157f, -0.39844325f, -0.45229334f, 0.53394395f, 0.39330181f,
                                   0.20658958f, -0.16444311f, 0.21831147f, 0.41480276f, 0.38495737f, 0.58587265f})
                  : torch::tensor({-0.092361726f, -0.10280974f, -0.099342987f, -0.082430691f, 0.11557457f, 0.077268064f,
                                   0.028503809f, -0.024118349f, 0.062610038f, 0.096605994f, 0.11752672f, 0.12254084f});
    EXPECT_TRUE(torch::allclose(centroids(q, 0), c0.reshape({5, 4}), 1e-5, 1e-5)) << centroids(q, 0);
    EXPECT_TRUE(torch::allclose(centroids(q, 1), c1.reshape({3, 4}), 1e-5, 1e-5)) << centroids(q, 1);
    q->eval();
    const ResidualQuantizerOutput out = q->forward(x.narrow(0, 0, 6));
    const torch::Tensor codes = normalize ? torch::tensor({2, 2, 1, 1, 4, 0, 0, 0, 3, 2, 2, 2}, torch::kInt64)
                                          : torch::tensor({2, 2, 1, 1, 4, 0, 0, 0, 3, 2, 2, 1}, torch::kInt64);
    const torch::Tensor quantized =
        normalize ? torch::tensor({1.032663f,   0.41637701f,  0.79449564f,  0.18207505f,  -0.33325082f,  0.8325026f,
                                   0.20818642f, 0.053165317f, -0.35869426f, -1.2799208f,  -0.80725813f,  -0.048255146f,
                                   0.2141462f,  0.10847381f,  -0.97875643f, -0.45317924f, -0.096386418f, 0.10076985f,
                                   1.0168037f,  1.2180195f,   1.032663f,    0.41637701f,  0.79449564f,   0.18207505f})
                  : torch::tensor({2.067688f,    0.10427381f, 1.1267467f,    -0.86793524f,  -1.8758864f,  1.0836668f,
                                   0.031895801f, 0.47580802f, -0.095891118f, -2.1093173f,   -1.1079477f,  0.90803194f,
                                   1.3984592f,   1.3896116f,  -1.6042953f,   -0.084086463f, -0.93552518f, -0.89826083f,
                                   2.1252334f,   2.1317782f,  2.1206524f,    0.084935881f,  1.0377237f,   -1.0145944f});
    EXPECT_TRUE(torch::equal(out.cluster_ids, codes.reshape({6, 2}))) << out.cluster_ids;
    EXPECT_TRUE(torch::allclose(out.quantized_embeddings, quantized.reshape({6, 4}), 1e-5, 1e-5));
  }
}

TEST(ResidualKMeansQuantizer, CandidatesOnceFitted) {
  ResidualKMeansQuantizerOptions o = options(false);
  o.candidate.enabled = true;
  o.candidate.topk = 3;
  ResidualKMeansQuantizer q(o);
  q->eval();
  q->set_inference(true);
  EXPECT_FALSE(q->forward(rows()).candidate_codes.defined());  // not fitted: no candidates, no error
  q->train_offline(rows(), false);
  const ResidualQuantizerOutput out = q->forward(rows());
  ASSERT_TRUE(out.candidate_codes.defined());
  EXPECT_EQ(out.candidate_codes.sizes(), (std::vector<int64_t>{60, 3, 2}));
  EXPECT_TRUE(torch::equal(out.candidate_codes.select(1, 0), out.cluster_ids));
  // Scores ascend; slot 0 is the distance to the greedy code's centroid.
  EXPECT_TRUE((out.candidate_scores.diff(1, 1) >= 0).all().item<bool>());
}

TEST(ResidualKMeansQuantizer, NeedsAsManyRowsAsTheLargestCodebook) {
  ResidualKMeansQuantizer q(options(false));
  try {
    q->train_offline(rows().narrow(0, 0, 4), false);
    FAIL() << "4 rows accepted for 5 codes";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("at least 5 rows"), std::string::npos) << e.what();
  }
}

}  // namespace residual_kmeans_quantizer_test
}  // namespace tzrec::nn::sid
