// The input side of the generative models against gr_modules_reference.py (an independent
// plain-PyTorch version of TorchEasyRec's ContextualInterleavePreprocessor, contextualized MLPs,
// SimpleActionEncoder, HSTUPositionalEncoder and TimestampLayerNormPostprocessor on padded
// tensors), plus hand-computed jagged operations and action encodings.
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "base/error.h"
#include "nn/gr/action_encoder.h"
#include "nn/gr/input_preprocessor.h"
#include "nn/gr/jagged.h"
#include "nn/gr/output_postprocessor.h"
#include "nn/gr/positional_encoder.h"
#include "nn/testing.h"

namespace tzrec::nn::gr {
namespace gr_modules_test {

using testing::pattern;

torch::Tensor offsets(std::vector<int64_t> o) { return torch::tensor(o, torch::kInt64); }

TEST(GrJagged, ConcatAndSplitAreInverse) {
  // left rows a0 a1 | - | a2 ; right rows b0 | b1 b2 | b3 (hand-written expectation).
  auto left = torch::tensor({10.f, 11.f, 12.f}).unsqueeze(1);
  auto right = torch::tensor({20.f, 21.f, 22.f, 23.f}).unsqueeze(1);
  auto ol = offsets({0, 2, 2, 3});
  auto orr = offsets({0, 1, 3, 4});
  auto cat = concat_2d_jagged(left, right, ol, orr);
  EXPECT_TRUE(torch::equal(cat.squeeze(1), torch::tensor({10.f, 11.f, 20.f, 21.f, 22.f, 12.f, 23.f})));
  auto [l, r] = split_2d_jagged(cat, ol, orr);
  EXPECT_TRUE(torch::equal(l, left));
  EXPECT_TRUE(torch::equal(r, right));
}

TEST(GrJagged, ConcatGradientRoutesBack) {
  auto left = torch::ones({2, 2}, torch::requires_grad());
  auto right = torch::ones({1, 2}, torch::requires_grad());
  auto out = concat_2d_jagged(left, right, offsets({0, 1, 2}), offsets({0, 0, 1}));
  // out rows: left0, left1, right0; weight row i by i + 1.
  (out * torch::arange(1, 4, torch::kFloat).unsqueeze(1)).sum().backward();
  EXPECT_TRUE(torch::equal(left.grad(), torch::tensor({{1.f, 1.f}, {2.f, 2.f}})));
  EXPECT_TRUE(torch::equal(right.grad(), torch::tensor({{3.f, 3.f}})));
}

TEST(GrJagged, BmmBroadcastAddPerSequence) {
  // sequence 0: rows [1, 2] @ [[1], [1]] + 5 = 8; sequence 1: row [3, 4] @ [[0], [2]] + 1 = 9.
  auto x = torch::tensor({{1.f, 2.f}, {3.f, 4.f}});
  auto w = torch::tensor({{{1.f}, {1.f}}, {{0.f}, {2.f}}});
  auto bias = torch::tensor({{5.f}, {1.f}});
  auto out = jagged_dense_bmm_broadcast_add(offsets({0, 1, 2}), x, w, bias);
  EXPECT_TRUE(torch::equal(out.squeeze(1), torch::tensor({8.f, 9.f})));
  auto empty_first = jagged_dense_bmm_broadcast_add(offsets({0, 0, 2}), x, w, bias);
  EXPECT_TRUE(torch::equal(empty_first.squeeze(1), torch::tensor({1.f * 0 + 2 * 2 + 1, 3.f * 0 + 4 * 2 + 1})));
}

TEST(GrActionEncoder, BitsSelectEmbeddingsAndTargetsGetTheLearnedRow) {
  ActionEncoderOptions o;
  o.action_embedding_dim = 1;
  o.action_weights = {1, 2};
  o.watchtime_to_action_thresholds = {10};
  o.watchtime_to_action_weights = {4};
  ActionEncoder enc(o);
  {
    torch::NoGradGuard g;
    enc->named_parameters()["_action_embedding_table"].copy_(torch::tensor({{1.f}, {10.f}, {100.f}}));
    enc->named_parameters()["_target_action_embedding_table"].copy_(torch::tensor({{7.f, 8.f, 9.f}}));
  }
  // history: actions 3 (bits 1, 2), watch 11 (≥ 10: bit 4); actions 2, watch 0 → one target.
  auto out = enc->forward(torch::tensor({{3.f}, {2.f}}), torch::tensor({{11.f}, {0.f}}), offsets({0, 2}),
                          offsets({0, 1}));
  EXPECT_TRUE(torch::equal(out, torch::tensor({{1.f, 10.f, 100.f}, {0.f, 10.f, 0.f}, {7.f, 8.f, 9.f}})));
  EXPECT_EQ(enc->named_buffers()["_combined_action_weights"].sizes(), torch::IntArrayRef({3}));
}

const std::vector<float> kEvalEncoded = {
    2.1378398f, 1.9525257f, 1.5029469f, 0.8499508f,
    -0.1391530f, -0.7084670f, -1.1818937f, -1.4953567f,
    1.8048646f, -0.0561395f, 0.2807212f, -0.0175232f,
    4.3241315f, 0.3390574f, 0.3201059f, 3.8698592f,
    2.3864996f, 0.5554025f, 0.8525845f, 0.4227434f,
    3.2972958f, 0.8803775f, 0.0244272f, 3.1060984f,
    1.6952531f, -0.2152449f, 0.1048241f, -0.1989653f,
    1.4117030f, 1.2645344f, 0.9462171f, 0.4998331f,
    0.6972601f, -0.0019713f, -0.7009357f, -1.3050325f,
    1.0608410f, -0.5667494f, 0.1032273f, 0.1563193f,
    1.7391775f, -0.1857183f, 0.0994916f, -0.1800524f,
    1.8912587f, 1.4456431f, 0.8043661f, 0.0542220f,
    0.5357548f, 0.1264512f, -0.2999668f, -0.6857862f,
    2.8081851f, 0.7774774f, 0.8630933f, 0.2234489f,
    5.2846789f, 1.5127602f, -0.1414130f, 3.9360695f,
    1.8618677f, -0.0231091f, 0.2720105f, -0.0007472f,
    2.8998210f, 0.0288695f, -0.3524719f, 2.1716700f,
    2.7456520f, 0.6835235f, 0.7168525f, 0.0718485f,
    4.9724355f, 1.8929126f, 1.0785326f, 4.2053566f,
    1.6967425f, -0.2163454f, 0.1041004f, -0.2009704f,
};
const std::vector<float> kEvalCandidates = {
    0.0754822f, 0.1378714f, 0.0468222f, -0.3850855f,
    0.0859564f, 0.1338297f, 0.0634399f, -0.4399425f,
    0.0954214f, 0.1427431f, 0.0365276f, -0.2922635f,
    0.1044371f, 0.1396423f, 0.0567988f, -0.3487856f,
};
const std::vector<float> kTrainEncoded = {
    2.1378398f, 1.9525257f, 1.5029469f, 0.8499508f,
    -0.1391530f, -0.7084670f, -1.1818937f, -1.4953567f,
    1.8048646f, -0.0561395f, 0.2807212f, -0.0175232f,
    4.3241315f, 0.3390574f, 0.3201059f, 3.8698592f,
    2.3864996f, 0.5554025f, 0.8525845f, 0.4227434f,
    3.2972958f, 0.8803775f, 0.0244272f, 3.1060984f,
    1.6952531f, -0.2152449f, 0.1048241f, -0.1989653f,
    4.2243528f, 0.0977665f, -0.4267052f, 3.9310119f,
    1.4117030f, 1.2645344f, 0.9462171f, 0.4998331f,
    0.6972601f, -0.0019713f, -0.7009357f, -1.3050325f,
    1.0608410f, -0.5667494f, 0.1032273f, 0.1563193f,
    3.6292198f, 0.2516553f, -0.3443114f, 3.9501541f,
    1.7391775f, -0.1857183f, 0.0994916f, -0.1800524f,
    4.2951136f, 0.6047041f, -0.3518909f, 3.5829718f,
    1.8912587f, 1.4456431f, 0.8043661f, 0.0542220f,
    0.5357548f, 0.1264512f, -0.2999668f, -0.6857862f,
    2.8081851f, 0.7774774f, 0.8630933f, 0.2234489f,
    5.2846789f, 1.5127602f, -0.1414130f, 3.9360695f,
    1.8618677f, -0.0231091f, 0.2720105f, -0.0007472f,
    2.8998210f, 0.0288695f, -0.3524719f, 2.1716700f,
    2.7456520f, 0.6835235f, 0.7168525f, 0.0718485f,
    4.9724355f, 1.8929126f, 1.0785326f, 4.2053566f,
    1.6967425f, -0.2163454f, 0.1041004f, -0.2009704f,
    4.5757790f, 0.7454373f, -0.7488668f, 3.3409069f,
};
const std::vector<float> kTrainCandidates = {
    0.0754822f, 0.1378714f, 0.0468222f, -0.3850855f,
    0.0859564f, 0.1338297f, 0.0634399f, -0.4399425f,
    0.0954214f, 0.1427431f, 0.0365276f, -0.2922635f,
    0.1044371f, 0.1396423f, 0.0567988f, -0.3487856f,
};
// The reference's setup (gr_modules_reference.py): B = 3, history lengths 2, 0, 3, targets 1, 2, 1,
// Du = 4, Dt = 6 (slice content encoder), D = 4, C = 2 contextual features of Dc = 3.
struct Pipeline {
  std::shared_ptr<InputPreprocessor> pre;
  PositionalEncoder pos{nullptr};
  std::shared_ptr<OutputPostprocessor> post;
};

Pipeline make_pipeline() {
  InputPreprocessorOptions o;
  o.type = "contextual_interleave_preprocessor";
  o.has_action_encoder = o.has_action_mlp = true;
  o.action_encoder.action_embedding_dim = 2;
  o.action_encoder.action_weights = {1, 2, 4};
  o.action_encoder.watchtime_to_action_thresholds = {10};
  o.action_encoder.watchtime_to_action_weights = {8};
  o.action_mlp.type = "parameterized_mlp";
  o.action_mlp.hidden_dim = 5;
  o.action_mlp.contextual_dropout_ratio = 0.0;
  o.content_encoder.type = "slice_content_encoder";
  o.content_mlp.type = "simple_mlp";
  o.content_mlp.hidden_dim = 6;
  InputPreprocessorDims d;
  d.uih_embedding_dim = 4;
  d.target_embedding_dim = 6;
  d.contextual_feature_dim = 3;
  d.max_contextual_seq_len = 2;
  d.output_embedding_dim = 4;
  Pipeline p;
  p.pre = make_input_preprocessor(o, d, "hstu.input_preprocessor");
  PositionalEncoderOptions po;
  po.num_position_buckets = 16;
  po.num_time_buckets = 8;
  po.use_time_encoding = true;
  p.pos = PositionalEncoder(4, p.pre->contextual_seq_len(), po);
  OutputPostprocessorOptions oo;
  oo.type = "timestamp_layernorm_postprocessor";
  oo.time_duration_period_units = {3600, 86400};
  oo.time_duration_units_per_period = {24, 7};
  p.post = make_output_postprocessor(oo, 4, "hstu.output_postprocessor");
  // pattern(shape, 0.1 · i), i the index of the parameter's name in sorted order.
  std::map<std::string, torch::Tensor> params;
  for (auto& kv : p.pre->named_parameters()) params[kv.key()] = kv.value();
  for (auto& kv : p.pos->named_parameters()) params["pos." + kv.key()] = kv.value();
  for (auto& kv : p.post->named_parameters()) params["post." + kv.key()] = kv.value();
  EXPECT_EQ(params.size(), 30u);
  torch::NoGradGuard g;
  int i = 0;
  for (auto& [name, t] : params) t.copy_(pattern(t.sizes().vec(), 0.1 * i++));
  return p;
}

std::map<std::string, torch::Tensor> reference_inputs() {
  return {
      {"uih.sequence", pattern({5, 4}, 1.0)},
      {"uih.sequence_length", torch::tensor({2, 0, 3}, torch::kInt64)},
      {"candidate.sequence", pattern({4, 6}, 2.0)},
      {"candidate.sequence_length", torch::tensor({1, 2, 1}, torch::kInt64)},
      {"uih_action.sequence", torch::tensor({1.f, 6.f, 3.f, 0.f, 5.f}).unsqueeze(1)},
      {"uih_watchtime.sequence", torch::tensor({12.f, 3.f, 10.f, 9.f, 0.f}).unsqueeze(1)},
      {"uih_timestamp.sequence", torch::tensor({1000.f, 4600.f, 200.f, 90000.f, 100000.f}).unsqueeze(1)},
      {"candidate_timestamp.sequence", torch::tensor({8200.f, 1000.f, 1300.f, 190000.f}).unsqueeze(1)},
      {"contextual", pattern({3, 6}, 3.0)},
  };
}

void expect_near(const torch::Tensor& got, const std::vector<float>& want) {
  auto expected = torch::tensor(want).reshape(got.sizes());
  EXPECT_TRUE(torch::allclose(got, expected, 1e-5, 2e-6)) << got << "\nwant\n" << expected;
}

void check_mode(bool train, const std::vector<float>& encoded, const std::vector<float>& candidates,
                std::vector<int64_t> lengths, std::vector<int64_t> num_targets, int64_t max_seq_len) {
  auto p = make_pipeline();
  p.pre->train(train);
  auto s = p.pre->forward(reference_inputs());
  EXPECT_TRUE(torch::equal(s.seq_lengths, torch::tensor(lengths, torch::kInt64)));
  EXPECT_TRUE(torch::equal(s.num_targets, torch::tensor(num_targets, torch::kInt64)));
  // TorchEasyRec's bound, not the longest row: interleaved 2·max history + max targets (eval) or
  // 2·(max history + max targets) (train), plus C.
  EXPECT_EQ(s.max_seq_len, max_seq_len);
  EXPECT_EQ(s.total_targets, std::accumulate(num_targets.begin(), num_targets.end(), int64_t{0}));
  auto x = p.pos->forward(s.seq_offsets, s.seq_timestamps, s.seq_embeddings, s.num_targets);
  expect_near(x, encoded);
  // Candidates: each row's last num_targets items, every other one when interleaved.
  std::vector<int64_t> idx;
  int64_t start = 0;
  for (size_t b = 0; b < lengths.size(); ++b) {
    for (int64_t i = lengths[b] - num_targets[b]; i < lengths[b]; i += train ? 2 : 1) idx.push_back(start + i);
    start += lengths[b];
  }
  auto index = torch::tensor(idx, torch::kInt64);
  expect_near(p.post->forward(x.index_select(0, index), s.seq_timestamps.index_select(0, index)), candidates);
}

TEST(GrPipeline, EvalKeepsTargetsOneItemEach) { check_mode(false, kEvalEncoded, kEvalCandidates, {7, 4, 9}, {1, 2, 1}, 10); }

TEST(GrPipeline, TrainInterleavesTargets) { check_mode(true, kTrainEncoded, kTrainCandidates, {8, 6, 10}, {2, 4, 2}, 12); }

TEST(GrPipeline, ConfigErrorsNameThePath) {
  InputPreprocessorOptions o;
  o.type = "contextual_interleave_preprocessor";
  o.content_encoder.type = "slice_content_encoder";
  o.content_mlp.type = "simple_mlp";
  o.content_mlp.hidden_dim = 4;
  InputPreprocessorDims d;
  d.uih_embedding_dim = 8;
  d.target_embedding_dim = 4;
  d.output_embedding_dim = 4;
  try {
    make_input_preprocessor(o, d, "model_config.dlrm_hstu.hstu.input_preprocessor");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("contextual_interleave_preprocessor.action_encoder"), std::string::npos)
        << e.what();
  }
  o.enable_interleaving = false;
  try {
    make_input_preprocessor(o, d, "p");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("p.contextual_interleave_preprocessor.content_encoder.slice_content_encoder"),
              std::string::npos)
        << e.what();
  }
  OutputPostprocessorOptions po;
  po.type = "timestamp_layernorm_postprocessor";
  po.time_duration_period_units = {3600};
  EXPECT_THROW(make_output_postprocessor(po, 4, "q"), ConfigError);
}

}  // namespace gr_modules_test
}  // namespace tzrec::nn::gr
