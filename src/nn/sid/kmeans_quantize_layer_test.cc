// KMeansQuantizeLayer: state names, the pre-fit zeros, training and evaluation assignment against
// hand-computed distances, and the checkpoint rule (a flag without centroids).
#include "nn/sid/kmeans_quantize_layer.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "nn/testing.h"

namespace tzrec::nn::sid {
namespace kmeans_quantize_layer_test {

TEST(KMeansQuantizeLayer, StateAndPreFitZeros) {
  KMeansQuantizeLayer layer(3, 2);
  EXPECT_EQ(nn::testing::names(layer->named_buffers()), (std::vector<std::string>{"centroids", "_is_initialized"}));
  EXPECT_TRUE(layer->named_parameters().is_empty());
  EXPECT_FALSE(layer->is_initialized());
  const QuantizeOutput out = layer->quantize(torch::ones({4, 2}));
  EXPECT_TRUE(torch::equal(out.ids, torch::zeros({4}, torch::kInt64)));
  EXPECT_TRUE(torch::equal(out.embeddings, torch::zeros({4, 2})));
}

TEST(KMeansQuantizeLayer, AssignsToTheNearestCentroid) {
  KMeansQuantizeLayer layer(3, 2);
  layer->load_centroids(torch::tensor({{0.0f, 0.0f}, {3.0f, 0.0f}, {0.0f, 4.0f}}));
  EXPECT_TRUE(layer->is_initialized());
  const torch::Tensor x = torch::tensor({{1.0f, 0.0f}, {2.0f, 1.0f}, {0.0f, 3.0f}});
  layer->train();
  QuantizeOutput out = layer->quantize(x);
  EXPECT_TRUE(torch::equal(out.ids, torch::tensor({0, 1, 2}, torch::kInt64)));
  EXPECT_FALSE(out.topk_ids.defined());
  layer->eval();
  out = layer->quantize(x, 2);
  EXPECT_TRUE(torch::equal(out.topk_ids, torch::tensor({{0, 1}, {1, 0}, {2, 0}}, torch::kInt64)));
  // Squared L2: (1, 4), (2, 5), (1, 9).
  EXPECT_TRUE(torch::allclose(out.topk_scores, torch::tensor({{1.0f, 4.0f}, {2.0f, 5.0f}, {1.0f, 9.0f}}), 1e-5));
  EXPECT_TRUE(torch::equal(out.embeddings, torch::tensor({{0.0f, 0.0f}, {3.0f, 0.0f}, {0.0f, 4.0f}})));
}

TEST(KMeansQuantizeLayer, RefusesAFlagWithoutCentroids) {
  KMeansQuantizeLayer layer(2, 2, "model_config.sid_rqkmeans: _quantizer.layers.1");
  layer->is_initialized_flag.fill_(true);  // as a checkpoint taken in the middle of a fit
  try {
    layer->quantize(torch::ones({1, 2}));
    FAIL() << "accepted";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("_quantizer.layers.1: _is_initialized is true"), std::string::npos);
  }
}

}  // namespace kmeans_quantize_layer_test
}  // namespace tzrec::nn::sid
