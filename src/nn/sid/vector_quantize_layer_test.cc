// VectorQuantizeLayer against sid_reference.py (src/nn/sid/, plain PyTorch; its printed values
// are copied here): the kaiming init of its codebook, distances, the evaluation top-k, the STE
// assignment with and without Sinkhorn, the hard Gumbel-Softmax (same draws after the same seed)
// with its gradients, and the config rules.
#include "nn/sid/vector_quantize_layer.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "nn/testing.h"

namespace tzrec::nn::sid {
namespace vector_quantize_layer_test {

using nn::testing::pattern;

VectorQuantizeLayer make(ForwardMode mode, Distance distance, bool sinkhorn, double tau = 1.0) {
  VectorQuantizeOptions o;
  o.embed_dim = 3;
  o.n_embed = 4;
  o.forward_mode = mode;
  o.distance = distance;
  o.use_sinkhorn = sinkhorn;
  o.gumbel_temperature = tau;
  VectorQuantizeLayer layer(o, "model_config.sid_rqvae");
  torch::NoGradGuard no_grad;
  layer->embedding->weight.copy_(pattern({4, 3}, 1.1));
  return layer;
}

TEST(VectorQuantizeLayer, CodebookIsKaimingUniformAsInTorchEasyRec) {
  VectorQuantizeOptions o;
  o.embed_dim = 3;
  o.n_embed = 4;
  torch::manual_seed(0);
  VectorQuantizeLayer layer(o);
  const torch::Tensor expected =
      torch::tensor({-0.22794768f, 0.14964373f, 1.2805368f, -1.311924f, -0.89030105f, -0.35802972f, -0.55126035f,
                     1.2218816f, -0.91666442f, -0.65100896f, -0.9880268f, -1.3244972f})
          .reshape({4, 3});
  EXPECT_TRUE(torch::allclose(layer->embedding->weight, expected, 1e-6, 1e-7)) << layer->embedding->weight;
  EXPECT_EQ(nn::testing::names(layer->named_parameters()), std::vector<std::string>{"embedding.weight"});
}

TEST(VectorQuantizeLayer, Distances) {
  const torch::Tensor x = pattern({5, 3}, 0.2);
  EXPECT_TRUE(torch::allclose(
      make(ForwardMode::kSte, Distance::kL2, false)->distances(x),
      torch::tensor({0.1778422f,   0.18640098f, 0.95853454f,  1.6519977f,  0.0028732817f, 0.18137112f,  1.6083498f,
                     2.7142427f,   0.36036697f, 0.024791991f, 0.51358098f, 1.2991929f,    1.983127f,    1.0204359f,
                     0.020026445f, 0.10837554f, 2.6082573f,   1.6019306f,  0.21533175f,   0.0038697706f})
          .reshape({5, 4}),
      1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(
      make(ForwardMode::kSte, Distance::kCosine, false)->distances(x),
      torch::tensor({-0.91389829f, -0.61703885f, 0.99981827f,  0.88865441f, -0.99788076f, -0.91198623f, 0.87653029f,
                     0.99997735f,  -0.74428475f, -0.97049487f, 0.3916164f,  0.78198636f,  0.95992619f,  0.71660835f,
                     -0.98831552f, -0.94193792f, 0.99210382f,  0.93516886f, -0.84575051f, -0.99773169f})
          .reshape({5, 4}),
      1e-5, 1e-6));
}

TEST(VectorQuantizeLayer, EvaluationTakesTheTopK) {
  VectorQuantizeLayer layer = make(ForwardMode::kSte, Distance::kL2, true);
  layer->eval();
  const QuantizeOutput out = layer->quantize(pattern({5, 3}, 0.2), 2);
  EXPECT_TRUE(torch::equal(out.topk_ids, torch::tensor({0, 1, 0, 1, 1, 0, 2, 3, 3, 2}, torch::kInt64).reshape({5, 2})));
  EXPECT_TRUE(torch::allclose(out.topk_scores,
                              torch::tensor({0.1778422f, 0.18640098f, 0.0028732817f, 0.18137112f, 0.024791991f,
                                             0.36036697f, 0.020026445f, 0.10837554f, 0.0038697706f, 0.21533175f})
                                  .reshape({5, 2}),
                              1e-5, 1e-6));
  EXPECT_TRUE(torch::equal(out.ids, out.topk_ids.select(1, 0)));
  EXPECT_TRUE(torch::equal(out.embeddings, layer->embedding->weight.index_select(0, out.ids)));
}

TEST(VectorQuantizeLayer, SteTrainingReturnsTheRawCodebookVectors) {
  for (bool sinkhorn : {false, true}) {
    VectorQuantizeLayer layer = make(ForwardMode::kSte, Distance::kL2, sinkhorn);
    layer->train();
    const torch::Tensor x = pattern({5, 3}, 0.2).requires_grad_(true);
    const QuantizeOutput out = layer->quantize(x);
    EXPECT_TRUE(torch::equal(out.ids, torch::tensor({0, 0, 1, 2, 3}, torch::kInt64)));
    EXPECT_FALSE(out.topk_ids.defined());
    out.embeddings.sum().backward();
    // The assignment passes no gradient to x; each chosen code gets one per row that chose it.
    EXPECT_FALSE(x.grad().defined());
    const torch::Tensor counts = torch::bincount(out.ids, {}, 4).to(torch::kFloat32).unsqueeze(1).expand({4, 3});
    EXPECT_TRUE(torch::equal(layer->embedding->weight.grad(), counts));
  }
}

TEST(VectorQuantizeLayer, GumbelSoftmaxMatchesTheReferenceDraws) {
  VectorQuantizeLayer layer = make(ForwardMode::kGumbelSoftmax, Distance::kL2, false, 0.5);
  layer->train();
  const torch::Tensor x = pattern({5, 3}, 0.2).requires_grad_(true);
  torch::manual_seed(3);
  const QuantizeOutput out = layer->quantize(x);
  EXPECT_TRUE(torch::equal(out.ids, torch::tensor({0, 2, 2, 3, 3}, torch::kInt64)));
  EXPECT_TRUE(torch::allclose(out.embeddings,
                              torch::tensor({0.4456037f, 0.49746218f, 0.4819915f, -0.088731296f, -0.26066443f,
                                             -0.39731786f, -0.088731296f, -0.26066443f, -0.39731786f, -0.48019624f,
                                             -0.49808228f, -0.44855523f, -0.48019624f, -0.49808228f, -0.44855523f})
                                  .reshape({5, 3}),
                              1e-6, 1e-7));
  (out.embeddings * pattern({5, 3}, 2.0)).sum().backward();
  EXPECT_TRUE(torch::allclose(x.grad(),
                              torch::tensor({0.0063909823f, 0.0082287332f, 0.0089527629f, -0.153459f, -0.20188299f,
                                             -0.22298305f, -0.3480376f, -0.47465181f, -0.53702408f, -0.018404735f,
                                             -0.016202236f, -0.011806839f, 0.019339839f, 0.020247638f, 0.018415013f})
                                  .reshape({5, 3}),
                              1e-4, 1e-6))
      << x.grad();
  EXPECT_TRUE(torch::allclose(
      layer->embedding->weight.grad(),
      torch::tensor({0.49094585f, 0.51271296f, 0.46508664f, 0.0100324f, -0.0018620882f, -0.013504581f, 0.00016063452f,
                     -0.17588192f, -0.3281197f, -0.30667484f, -0.0082735922f, 0.29124781f})
          .reshape({4, 3}),
      1e-4, 1e-6))
      << layer->embedding->weight.grad();
}

TEST(VectorQuantizeLayer, ConfigRules) {
  VectorQuantizeOptions o;
  o.embed_dim = 3;
  o.n_embed = 4;
  o.forward_mode = ForwardMode::kGumbelSoftmax;
  o.use_sinkhorn = true;
  EXPECT_THROW(VectorQuantizeLayer(o, "model_config.sid_rqvae"), ConfigError);
  o.forward_mode = ForwardMode::kSte;
  o.sinkhorn_epsilon = 0;
  try {
    VectorQuantizeLayer layer(o, "model_config.sid_rqvae");
    FAIL() << "epsilon 0 accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model_config.sid_rqvae.sinkhorn_config.epsilon"), std::string::npos);
  }
  o.use_sinkhorn = false;  // epsilon is not read without Sinkhorn
  EXPECT_NO_THROW(VectorQuantizeLayer(o, "model_config.sid_rqvae"));
}

}  // namespace vector_quantize_layer_test
}  // namespace tzrec::nn::sid
