// ResidualVectorQuantizer against sid_reference.py (src/nn/sid/, plain PyTorch and its port of
// faiss's k-means; its printed values are copied here): the residual walk in evaluation (codes,
// sum, latents; with normalized residuals), candidate SIDs in inference mode, the
// straight-through estimator and where the gradients go, the rotation trick's value and
// gradient, and the k-means initialisation of the codebooks.
#include "nn/sid/residual_vector_quantizer.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "nn/testing.h"

namespace tzrec::nn::sid {
namespace residual_vector_quantizer_test {

using nn::testing::pattern;

ResidualVectorQuantizerOptions options(bool normalize = false) {
  ResidualVectorQuantizerOptions o;
  o.embed_dim = 3;
  o.n_embed = {4, 3, 2};
  o.normalize_residuals = normalize;
  o.use_sinkhorn = false;
  return o;
}

// The reference's codebooks B0, B1, B2.
ResidualVectorQuantizer with_codebooks(ResidualVectorQuantizerOptions o) {
  ResidualVectorQuantizer q(std::move(o), "model_config.sid_rqvae");
  torch::NoGradGuard no_grad;
  auto l = [&](size_t i) -> VectorQuantizeLayerImpl& { return static_cast<VectorQuantizeLayerImpl&>(q->layer(i)); };
  l(0).embedding->weight.copy_(pattern({4, 3}, 0.5) * 2);
  l(1).embedding->weight.copy_(pattern({3, 3}, 1.7));
  l(2).embedding->weight.copy_(pattern({2, 3}, 2.9) * 0.5);
  return q;
}

torch::Tensor input() { return pattern({6, 3}, 0.9) * 1.5; }

TEST(ResidualVectorQuantizer, StateNames) {
  ResidualVectorQuantizer q(options());
  EXPECT_EQ(nn::testing::names(q->named_buffers()), std::vector<std::string>{"initted"});
  EXPECT_EQ(nn::testing::names(q->named_parameters()),
            (std::vector<std::string>{"layers.0.embedding.weight", "layers.1.embedding.weight",
                                      "layers.2.embedding.weight"}));
  EXPECT_TRUE(q->initted.item<bool>());  // no kmeans_init: nothing to wait for
}

TEST(ResidualVectorQuantizer, EvaluationWalk) {
  ResidualVectorQuantizer q = with_codebooks(options());
  q->eval();
  const ResidualQuantizerOutput out = q->forward(input());
  EXPECT_TRUE(torch::equal(
      out.cluster_ids,
      torch::tensor({0, 1, 0, 1, 2, 0, 2, 2, 0, 3, 1, 0, 3, 0, 0, 0, 2, 0}, torch::kInt64).reshape({6, 3})));
  EXPECT_TRUE(
      torch::allclose(out.quantized_embeddings,
                      torch::tensor({0.70201254f, 0.71311629f, 0.62770301f, 0.70797074f, 0.4293682f, 0.092652559f,
                                     0.11795327f, -0.43650016f, -0.93187523f, -0.41272098f, -0.92278838f, -1.3079609f,
                                     -0.079663277f, -0.46460736f, -0.78666919f, 0.18816468f, 0.27625918f, 0.32696319f})
                          .reshape({6, 3}),
                      1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(
      out.latents,
      torch::tensor({0.47942555f,   0.76432896f,  0.94578403f,  0.64220023f,  0.74512994f,  0.74720985f,  0.70201254f,
                     0.71311629f,   0.62770301f,  0.99923164f,  0.91743797f,  0.71147341f,  0.64815843f,  0.46138188f,
                     0.2121594f,    0.70797074f,  0.4293682f,   0.092652559f, 0.40921414f,  0.051569615f, -0.31305438f,
                     0.058140963f,  -0.40448648f, -0.81236839f, 0.11795327f,  -0.43650016f, -0.93187523f, -0.63530797f,
                     -0.87157565f,  -0.98987985f, -0.47253329f, -0.89077467f, -1.188454f,   -0.41272098f, -0.92278838f,
                     -1.3079609f,   -0.63530797f, -0.87157565f, -0.98987985f, -0.13947558f, -0.43259367f, -0.66716236f,
                     -0.079663277f, -0.46460736f, -0.78666919f, 0.47942555f,  0.76432896f,  0.94578403f,  0.12835237f,
                     0.30827287f,   0.44647002f,  0.18816468f,  0.27625918f,  0.32696319f})
          .reshape({6, 3, 3}),
      1e-5, 1e-6));
  EXPECT_FALSE(out.candidate_codes.defined());
  EXPECT_TRUE(torch::equal(q->get_codes(input()), out.cluster_ids));
  EXPECT_TRUE(torch::allclose(q->decode_codes(out.cluster_ids), out.quantized_embeddings));

  ResidualVectorQuantizer normalized = with_codebooks(options(true));
  normalized->eval();
  const ResidualQuantizerOutput n = normalized->forward(input());
  EXPECT_TRUE(torch::equal(
      n.cluster_ids,
      torch::tensor({0, 2, 0, 1, 2, 1, 3, 0, 0, 3, 0, 0, 3, 0, 1, 0, 2, 1}, torch::kInt64).reshape({6, 3})));
  EXPECT_TRUE(torch::allclose(
      n.quantized_embeddings,
      torch::tensor({0.18816468f, 0.27625918f, 0.32696319f, 0.45733315f, 0.2250655f, -0.037663803f, -0.079663277f,
                     -0.46460736f, -0.78666919f, -0.079663277f, -0.46460736f, -0.78666919f, -0.33030087f, -0.66891003f,
                     -0.91698557f, -0.06247291f, 0.071956486f, 0.19664682f})
          .reshape({6, 3}),
      1e-5, 1e-6));
}

TEST(ResidualVectorQuantizer, CandidatesInInferenceOnly) {
  ResidualVectorQuantizerOptions o = options();
  o.candidate.enabled = true;
  o.candidate.topk = 2;
  ResidualVectorQuantizer q = with_codebooks(o);
  q->eval();
  EXPECT_FALSE(q->forward(input()).candidate_codes.defined());  // evaluation
  q->set_inference(true);
  const ResidualQuantizerOutput out = q->forward(input());
  EXPECT_FALSE(out.latents.defined());
  ASSERT_TRUE(out.candidate_codes.defined());
  EXPECT_EQ(out.candidate_codes.sizes(), (std::vector<int64_t>{6, 2, 3}));
  const torch::Tensor last = torch::tensor({0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}, torch::kInt64).reshape({6, 2});
  EXPECT_TRUE(torch::equal(out.candidate_codes.select(2, 2), last));
  // The greedy prefix in every slot; slot 0 is the SID itself.
  EXPECT_TRUE(torch::equal(out.candidate_codes.select(1, 1).narrow(1, 0, 2), out.cluster_ids.narrow(1, 0, 2)));
  EXPECT_TRUE(torch::equal(out.candidate_codes.select(1, 0), out.cluster_ids));
  EXPECT_TRUE(
      torch::allclose(out.candidate_scores,
                      torch::tensor({0.027645219f, 0.12449971f, 0.046105344f, 0.23952374f, 0.23496714f, 0.49344945f,
                                     0.43441507f, 0.65419626f, 0.68515223f, 0.73154992f, 0.085095987f, 0.28730732f})
                          .reshape({6, 2}),
                      1e-5, 1e-6));
}

TEST(ResidualVectorQuantizer, CandidateConfigRules) {
  ResidualVectorQuantizerOptions o = options();
  o.candidate.enabled = true;
  o.candidate.topk = 3;  // the last codebook has 2 codes
  EXPECT_THROW(ResidualVectorQuantizer(o, "model_config.sid_rqvae"), ConfigError);
  o.candidate.topk = 1;
  o.candidate.strategy = "beam";
  EXPECT_THROW(ResidualVectorQuantizer(o, "model_config.sid_rqvae"), ConfigError);
  o.candidate.enabled = false;  // settings of a disabled output are not read
  EXPECT_NO_THROW(ResidualVectorQuantizer(o, "model_config.sid_rqvae"));
}

TEST(ResidualVectorQuantizer, StraightThroughEstimator) {
  ResidualVectorQuantizer q = with_codebooks(options());
  q->train();
  const torch::Tensor x = input().requires_grad_(true);
  const ResidualQuantizerOutput out = q->forward(x);
  // The value is the codebook sum; without Sinkhorn the training codes are the nearest ones.
  EXPECT_TRUE(
      torch::allclose(out.quantized_embeddings,
                      torch::tensor({0.70201254f, 0.71311629f, 0.62770301f, 0.70797074f, 0.4293682f, 0.092652559f,
                                     0.11795327f, -0.43650016f, -0.93187523f, -0.41272098f, -0.92278838f, -1.3079609f,
                                     -0.079663277f, -0.46460736f, -0.78666919f, 0.18816468f, 0.27625918f, 0.32696319f})
                          .reshape({6, 3}),
                      1e-5, 1e-6));
  const torch::Tensor g = pattern({6, 3}, 0.4);
  (out.quantized_embeddings * g).sum().backward({}, /*retain_graph=*/true);
  EXPECT_TRUE(torch::allclose(x.grad(), g));  // the identity for the encoder
  for (size_t i = 0; i < 3; ++i) {
    const auto& w = static_cast<VectorQuantizeLayerImpl&>(q->layer(i)).embedding->weight;
    EXPECT_TRUE(!w.grad().defined() || w.grad().abs().sum().item<double>() == 0.0) << "codebook " << i;
  }
  // The codebooks learn through the latents (the commitment loss).
  out.latents.sum().backward();
  const auto& w0 = static_cast<VectorQuantizeLayerImpl&>(q->layer(0)).embedding->weight;
  EXPECT_GT(w0.grad().abs().sum().item<double>(), 0.0);
}

TEST(ResidualVectorQuantizer, RotationTrick) {
  const torch::Tensor x = input().requires_grad_(true);
  const torch::Tensor quant =
      torch::tensor({0.18816468f, 0.27625918f, 0.32696319f, 0.45733315f, 0.2250655f, -0.037663803f, -0.079663277f,
                     -0.46460736f, -0.78666919f, -0.079663277f, -0.46460736f, -0.78666919f, -0.33030087f, -0.66891003f,
                     -0.91698557f, -0.06247291f, 0.071956486f, 0.19664682f})
          .reshape({6, 3});
  const torch::Tensor out = rotation_trick(x, quant);
  EXPECT_TRUE(torch::allclose(
      out,
      torch::tensor({0.1881647f, 0.27625924f, 0.32696319f, 0.45733312f, 0.22506544f, -0.037663803f, -0.079663292f,
                     -0.46460745f, -0.78666955f, -0.079663292f, -0.46460742f, -0.78666908f, -0.33030093f, -0.66891003f,
                     -0.91698563f, -0.062472899f, 0.071956471f, 0.19664675f})
          .reshape({6, 3}),
      1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(out, quant, 1e-5, 1e-5));  // the value is the quantized vector
  (out * pattern({6, 3}, 0.4)).sum().backward();
  EXPECT_TRUE(
      torch::allclose(x.grad(),
                      torch::tensor({0.099128932f, 0.14078823f, 0.1633926f, 0.1318121f, 0.25591198f, 0.34537551f,
                                     0.41871253f, 0.15569225f, -0.1284f, -0.39187855f, -0.29456031f, -0.1573745f,
                                     -1.0530384f, -0.39812613f, 0.31067181f, -0.018540846f, 0.02815162f, 0.071033902f})
                          .reshape({6, 3}),
                      1e-4, 1e-6))
      << x.grad();

  ResidualVectorQuantizerOptions o = options();
  o.rotation_trick = true;
  ResidualVectorQuantizer q = with_codebooks(o);
  q->train();
  const torch::Tensor y = input().requires_grad_(true);
  const ResidualQuantizerOutput r = q->forward(y);
  EXPECT_TRUE(
      torch::allclose(r.quantized_embeddings,
                      torch::tensor({0.70201254f, 0.71311629f, 0.62770301f, 0.70797074f, 0.4293682f, 0.092652559f,
                                     0.11795327f, -0.43650016f, -0.93187523f, -0.41272098f, -0.92278838f, -1.3079609f,
                                     -0.079663277f, -0.46460736f, -0.78666919f, 0.18816468f, 0.27625918f, 0.32696319f})
                          .reshape({6, 3}),
                      1e-5, 1e-5));
  r.quantized_embeddings.sum().backward();
  EXPECT_FALSE(torch::allclose(y.grad(), torch::ones({6, 3})));  // rotated, not the identity
}

TEST(ResidualVectorQuantizer, GumbelWalksTheLiveInput) {
  ResidualVectorQuantizerOptions o = options();
  o.forward_mode = ForwardMode::kGumbelSoftmax;
  o.use_sinkhorn = true;  // turned off with a warning
  ResidualVectorQuantizer q = with_codebooks(o);
  q->train();
  const torch::Tensor x = input().requires_grad_(true);
  torch::manual_seed(1);
  const ResidualQuantizerOutput out = q->forward(x);
  out.quantized_embeddings.sum().backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_FALSE(torch::allclose(x.grad(), torch::ones({6, 3})));  // through the soft assignment
}

TEST(ResidualVectorQuantizer, KMeansInitialisation) {
  ResidualVectorQuantizerOptions o;
  o.embed_dim = 4;
  o.n_embed = {4, 3};
  o.kmeans_init = true;
  o.use_sinkhorn = false;
  ResidualVectorQuantizer q(o);
  EXPECT_FALSE(q->initted.item<bool>());
  q->train();
  // clustered(40, 0.4, 1.3) of the reference: centers[i % 5] + 0.4 · pattern.
  const torch::Tensor c = torch::tensor({{2.0f, 0.0f, 1.0f, -1.0f},
                                         {-2.0f, 1.0f, 0.0f, 0.5f},
                                         {0.0f, -2.0f, -1.0f, 1.0f},
                                         {1.5f, 1.5f, -1.5f, 0.0f},
                                         {-1.0f, -1.0f, 2.0f, 2.0f}});
  const torch::Tensor batch =
      c.index_select(0, torch::arange(40, torch::kInt64).remainder(5)) + 0.4 * pattern({40, 4}, 1.3);
  EXPECT_THROW(q->forward(batch.narrow(0, 0, 3)), DataError);  // fewer rows than 4 codes
  q->forward(batch);
  EXPECT_TRUE(q->initted.item<bool>());
  const auto& w0 = static_cast<VectorQuantizeLayerImpl&>(q->layer(0)).embedding->weight;
  const auto& w1 = static_cast<VectorQuantizeLayerImpl&>(q->layer(1)).embedding->weight;
  EXPECT_TRUE(
      torch::allclose(w0,
                      torch::tensor({-0.043523416f, -2.0354519f, -1.0225821f, 0.99334401f, -0.95463204f, -0.95990175f,
                                     2.0294013f, 2.0147252f, -2.0180638f, 0.96794951f, -0.041699294f, 0.45429564f,
                                     1.7752094f, 0.77763057f, -0.22368777f, -0.47856748f})
                          .reshape({4, 4}),
                      1e-5, 1e-5))
      << w0;
  EXPECT_TRUE(torch::allclose(
      w1,
      torch::tensor({-0.26503831f, 0.74799097f, -1.238708f, 0.52306479f, -2.4835269e-09f, -2.2351742e-08f,
                     4.4082604e-08f, 9.9341078e-09f, 0.26503831f, -0.74799085f, 1.238708f, -0.52306473f})
          .reshape({3, 4}),
      1e-5, 1e-5))
      << w1;
  const torch::Tensor before = w0.clone();
  q->forward(batch * 2);  // once only
  EXPECT_TRUE(torch::equal(w0, before));
}

}  // namespace residual_vector_quantizer_test
}  // namespace tzrec::nn::sid
