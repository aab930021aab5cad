#include "nn/simple_attention.h"

#include <gtest/gtest.h>

#include "nn/testing.h"

#include "base/error.h"

namespace tzrec::nn {
namespace simple_attention_test {

using Inputs = std::map<std::string, torch::Tensor>;

using testing::pattern;  // the reference script computes the expected values below

// The reference script's simple_attention_case(): D = 3, lengths {3, 1, 0} (int32), zero padding.
Inputs case_inputs() {
  torch::Tensor valid = torch::arange(4).unsqueeze(0) < torch::tensor({3, 1, 0}).unsqueeze(1);
  return {{"seq.query", pattern({3, 3}, 0.75)},
          {"seq.sequence", pattern({3, 4, 3}, 1.25) * valid.unsqueeze(2)},
          {"seq.sequence_length", torch::tensor({3, 1, 0}, torch::kInt32)}};
}

void expect_close(const torch::Tensor& got, const torch::Tensor& want, double tol = 1e-5) {
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(torch::allclose(got, want, tol, tol)) << "got " << got << "\nwant " << want;
}

// Expected values: /usr/bin/python3 tests/python/sequence_encoder_reference.py,
// simple_attention_case(). Row 2 is empty and gives 0.
TEST(SimpleAttention, MatchesPyTorch) {
  SimpleAttention attn(3, 3, "seq", SimpleAttentionOptions{});
  EXPECT_EQ(attn->output_dim(), 3);
  EXPECT_EQ(attn->input(), "seq");
  EXPECT_TRUE(attn->named_parameters().is_empty());
  expect_close(attn->forward(case_inputs()),
               torch::tensor({{0.3223470449447632, 0.2559545636177063, 0.15491989254951477},
                              {-0.2795024812221527, -0.11066854745149612, 0.07314407080411911},
                              {0.0, 0.0, 0.0}}));
  SimpleAttention truncated(3, 3, "seq", SimpleAttentionOptions{2});
  expect_close(truncated->forward(case_inputs()),
               torch::tensor({{0.4252304136753082, 0.3788011074066162, 0.28110283613204956},
                              {-0.2795024812221527, -0.11066854745149612, 0.07314407080411911},
                              {0.0, 0.0, 0.0}}));
}

// A padded step holding a huge value gets zero weight; T = 0 gives zeros.
TEST(SimpleAttention, PaddingIsMaskedAndEmptyBatchGivesZeros) {
  SimpleAttention attn(3, 3, "seq", SimpleAttentionOptions{});
  Inputs in = case_inputs();
  torch::Tensor want = attn->forward(in);
  in["seq.sequence"].index_put_({1, torch::indexing::Slice(1, 4)}, 1e6);  // row 1 has 1 step
  expect_close(attn->forward(in), want, 1e-6);
  in["seq.sequence"] = torch::zeros({3, 0, 3});
  in["seq.sequence_length"] = torch::zeros({3}, torch::kInt64);
  EXPECT_TRUE(torch::equal(attn->forward(in), torch::zeros({3, 3})));
}

TEST(SimpleAttention, QueryDimMustEqualSequenceDim) {
  try {
    SimpleAttention attn(4, 3, "seq", SimpleAttentionOptions{}, "model_config.deepfm.seq_encoders[1]");
    ADD_FAILURE() << "no error for query_dim != sequence_dim";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model_config.deepfm.seq_encoders[1]: SimpleAttention needs the query of "
                                         "sequence group \"seq\" as wide as its sequence, got 3 vs 4"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace simple_attention_test
}  // namespace tzrec::nn
