#include "nn/pooling_encoder.h"

#include <gtest/gtest.h>

#include "nn/testing.h"

#include "base/error.h"

namespace tzrec::nn {
namespace pooling_encoder_test {

using Inputs = std::map<std::string, torch::Tensor>;

using testing::pattern;  // the reference script computes the expected values below

// The reference script's pooling_case(): D = 3, lengths {3, 1, 0} (int64), zero padding.
Inputs case_inputs() {
  torch::Tensor valid = torch::arange(4).unsqueeze(0) < torch::tensor({3, 1, 0}).unsqueeze(1);
  return {{"seq.sequence", pattern({3, 4, 3}, 1.25) * valid.unsqueeze(2)},
          {"seq.sequence_length", torch::tensor({3, 1, 0}, torch::kInt64)}};
}

void expect_close(const torch::Tensor& got, const torch::Tensor& want, double tol = 1e-5) {
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(torch::allclose(got, want, tol, tol)) << "got " << got << "\nwant " << want;
}

PoolingEncoder encoder(const std::string& type, int64_t max_seq_length) {
  PoolingEncoderOptions o;
  o.pooling_type = type;
  o.max_seq_length = max_seq_length;
  return PoolingEncoder(3, 3, "seq", o);
}

// Expected values: /usr/bin/python3 tests/python/sequence_encoder_reference.py, pooling_case().
// The empty row 2 gives 0 (its length is clamped to 1 for the mean).
TEST(PoolingEncoder, SumAndMeanMatchPyTorch) {
  EXPECT_EQ(encoder("mean", 0)->output_dim(), 3);
  EXPECT_EQ(encoder("mean", 0)->input(), "seq");
  EXPECT_TRUE(encoder("sum", 0)->named_parameters().is_empty());
  const auto row1 = std::vector<double>{-0.2795024812221527, -0.11066854745149612, 0.07314407080411911};
  auto want = [&](std::vector<double> row0) {
    return torch::tensor({row0[0], row0[1], row0[2], row1[0], row1[1], row1[2], 0.0, 0.0, 0.0}).reshape({3, 3});
  };
  expect_close(encoder("sum", 0)->forward(case_inputs()),
               want({0.6654297113418579, 0.3779301941394806, 0.039279669523239136}));
  expect_close(encoder("mean", 0)->forward(case_inputs()),
               want({0.22180990874767303, 0.12597672641277313, 0.013093222863972187}));
  expect_close(encoder("sum", 2)->forward(case_inputs()),
               want({0.8266976475715637, 0.6994296312332153, 0.47749704122543335}));
  expect_close(encoder("mean", 2)->forward(case_inputs()),
               want({0.41334882378578186, 0.34971481561660767, 0.23874852061271667}));
}

// Sum pooling needs no lengths; int32 lengths work for the mean; T = 0 gives zeros.
TEST(PoolingEncoder, InputsAndEmptyBatch) {
  Inputs in = case_inputs();
  torch::Tensor sum = encoder("sum", 0)->forward({{"seq.sequence", in["seq.sequence"]}});
  EXPECT_TRUE(torch::allclose(sum, in["seq.sequence"].sum(1)));
  in["seq.sequence_length"] = in["seq.sequence_length"].to(torch::kInt32);
  torch::Tensor mean = encoder("mean", 0)->forward(in);
  EXPECT_EQ(mean.scalar_type(), torch::kFloat);
  EXPECT_TRUE(torch::allclose(mean, sum / torch::tensor({3.0, 1.0, 1.0}).unsqueeze(1)));
  in["seq.sequence"] = torch::zeros({3, 0, 3});
  in["seq.sequence_length"] = torch::zeros({3}, torch::kInt64);
  EXPECT_TRUE(torch::equal(encoder("mean", 0)->forward(in), torch::zeros({3, 3})));
  EXPECT_TRUE(torch::equal(encoder("sum", 0)->forward(in), torch::zeros({3, 3})));
}

TEST(PoolingEncoder, BadPoolingTypeIsConfigError) {
  PoolingEncoderOptions o;
  EXPECT_EQ(o.pooling_type, "mean");
  o.pooling_type = "max";
  try {
    PoolingEncoder enc(3, 3, "seq", o, "model_config.deepfm.deep_seq_encoders[0].pooling_encoder");
    ADD_FAILURE() << "no error for pooling_type max";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model_config.deepfm.deep_seq_encoders[0].pooling_encoder.pooling_type: "
                                         "\"max\" is not supported; use \"mean\" or \"sum\""),
              std::string::npos)
        << e.what();
  }
}

}  // namespace pooling_encoder_test
}  // namespace tzrec::nn
