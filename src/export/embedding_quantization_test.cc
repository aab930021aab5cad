#include "export/embedding_quantization.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::exporting {
namespace embedding_quantization_test {

TEST(QuantEmb, ParsesTheEnvironmentValues) {
  EXPECT_EQ(parse_quant_emb(nullptr), EmbeddingQuant::kInt8);
  EXPECT_EQ(parse_quant_emb("INT8"), EmbeddingQuant::kInt8);
  EXPECT_EQ(parse_quant_emb("FP16"), EmbeddingQuant::kFp16);
  EXPECT_EQ(parse_quant_emb("FP32"), EmbeddingQuant::kFp32);
  EXPECT_EQ(parse_quant_emb("0"), EmbeddingQuant::kFp32);
  EXPECT_THROW(parse_quant_emb("INT4"), NotSupportedError);
  EXPECT_THROW(parse_quant_emb("INT2"), NotSupportedError);
  try {
    parse_quant_emb("int8");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("QUANT_EMB=int8"), std::string::npos) << e.what();
  }
}

TEST(QuantizeTable, Fp32AndFp16StoreTheValues) {
  auto w = torch::randn({7, 5});
  auto fp32 = quantize_table(w, EmbeddingQuant::kFp32);
  EXPECT_TRUE(torch::equal(fp32, w));
  EXPECT_TRUE(torch::equal(dequantize_table(fp32, EmbeddingQuant::kFp32, 5, "t"), w));
  auto fp16 = quantize_table(w, EmbeddingQuant::kFp16);
  EXPECT_EQ(fp16.scalar_type(), torch::kHalf);
  EXPECT_TRUE(torch::equal(dequantize_table(fp16, EmbeddingQuant::kFp16, 5, "t"), w.to(torch::kHalf).to(torch::kFloat)));
}

// Reads row r of the INT8 layout byte by byte: codes, then float16 scale and bias.
std::vector<float> decode_row_by_hand(const torch::Tensor& stored, int64_t r, int64_t dim) {
  auto bytes = stored[r].contiguous();
  const uint8_t* p = bytes.data_ptr<uint8_t>();
  c10::Half scale, bias;
  std::memcpy(&scale, p + dim, 2);
  std::memcpy(&bias, p + dim + 2, 2);
  std::vector<float> out;
  for (int64_t j = 0; j < dim; ++j) out.push_back(static_cast<float>(p[j]) * float(scale) + float(bias));
  return out;
}

TEST(QuantizeTable, Int8RowLayoutAndError) {
  torch::manual_seed(3);
  const int64_t dim = 16;
  auto w = torch::randn({50, dim}) * torch::linspace(0.01, 4.0, 50).unsqueeze(1);
  auto stored = quantize_table(w, EmbeddingQuant::kInt8);
  ASSERT_EQ(stored.scalar_type(), torch::kUInt8);
  ASSERT_EQ(stored.sizes(), (std::vector<int64_t>{50, dim + 4}));
  auto back = dequantize_table(stored, EmbeddingQuant::kInt8, dim, "t");
  for (int64_t r = 0; r < 50; ++r) {
    auto by_hand = decode_row_by_hand(stored, r, dim);
    const float mn = w[r].min().item<float>(), mx = w[r].max().item<float>();
    const float step = (mx - mn) / 255.0f;
    for (int64_t j = 0; j < dim; ++j) {
      EXPECT_FLOAT_EQ(back[r][j].item<float>(), by_hand[j]);
      // Half a step plus the float16 rounding of the row's range ends.
      const float bound = 0.5f * step * 1.01f + (std::abs(mn) + std::abs(mx)) * 2e-3f;
      EXPECT_LE(std::abs(back[r][j].item<float>() - w[r][j].item<float>()), bound) << r << "," << j;
    }
  }
}

TEST(QuantizeTable, Int8IsExactOnARepresentableGrid) {
  // Row values 1 + 0.5 k, k = 0..255: scale 0.5 and bias 1 are exact in float16.
  auto row = 1.0 + 0.5 * torch::arange(256, torch::kFloat32);
  auto w = torch::stack({row, row.flip(0)});
  auto stored = quantize_table(w, EmbeddingQuant::kInt8);
  EXPECT_TRUE(torch::equal(stored.narrow(1, 0, 256)[0], torch::arange(256).to(torch::kUInt8)));
  EXPECT_TRUE(torch::equal(dequantize_table(stored, EmbeddingQuant::kInt8, 256, "t"), w));
}

TEST(QuantizeTable, Int8ConstantRowsAndBlocks) {
  // More rows than one quantization block; constant rows (scale 0) read back as their value.
  auto w = torch::randn({70000, 3});
  w.narrow(0, 65535, 2).fill_(0.75);
  w[69999].fill_(-2.0);
  auto back = dequantize_table(quantize_table(w, EmbeddingQuant::kInt8), EmbeddingQuant::kInt8, 3, "t");
  EXPECT_TRUE(torch::equal(back.narrow(0, 65535, 2), torch::full({2, 3}, 0.75)));
  EXPECT_TRUE(torch::equal(back[69999], torch::full({3}, -2.0)));
  EXPECT_LT((back - w).abs().max().item<float>(), 0.05);
}

TEST(DequantizeTable, RefusesStorageOfTheWrongShapeOrType) {
  auto stored = quantize_table(torch::randn({4, 8}), EmbeddingQuant::kInt8);
  EXPECT_THROW(dequantize_table(stored, EmbeddingQuant::kInt8, 6, "t"), CheckpointError);
  EXPECT_THROW(dequantize_table(stored, EmbeddingQuant::kFp32, 12, "t"), CheckpointError);
  try {
    dequantize_table(torch::zeros({4, 8}), EmbeddingQuant::kFp16, 8, "emb.weight");
    FAIL();
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("emb.weight"), std::string::npos) << e.what();
  }
}

}  // namespace embedding_quantization_test
}  // namespace tzrec::exporting
