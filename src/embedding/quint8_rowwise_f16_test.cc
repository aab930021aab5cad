// QUint8RowwiseF16 rows (quint8_rowwise_f16.h). Expected values are worked out by hand from the
// formulas of TorchEasyRec's quant_util._quantize_quint8_rowwise_f16 (fp16 rounding shown in the
// comments) and were checked with numpy 1.24 running those formulas (float16 = numpy's float16).
#include "embedding/quint8_rowwise_f16.h"

#include <cstring>
#include <limits>

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::embedding {
namespace quint8_rowwise_f16_test {

uint16_t half_at(const torch::Tensor& row, int64_t at) {
  uint16_t bits = 0;
  std::memcpy(&bits, row.data_ptr<uint8_t>() + at, 2);
  return bits;
}

std::vector<int> codes(const torch::Tensor& row, int64_t dim) {
  std::vector<int> out;
  for (int64_t j = 0; j < dim; ++j) out.push_back(row.data_ptr<uint8_t>()[j]);
  return out;
}

TEST(Quint8RowwiseF16, RowsAsWorkedOutByHand) {
  const torch::Tensor values = torch::tensor({{0.0f, 0.5f, 1.0f, 2.55f},
                                              {-0.3f, 0.7f, 0.2f, 0.45f},
                                              {-1.0f, -1.0f, -1.0f, -1.0f},
                                              {1e-9f, 2e-9f, 1e-9f, 1e-9f}});
  const torch::Tensor q = quantize_quint8_rowwise_f16(values, "test");
  ASSERT_EQ(q.sizes(), (std::vector<int64_t>{4, 8}));
  // Row 0: offset fp16(0) = 0; scale 2.55 / 255 = 0.01 → fp16 1.2802734375 · 2^-7 = 0.0100021362
  // (bits 0x211F = 8479); codes rint(0.5 / 0.0100021) = 50, rint(99.98) = 100, rint(254.95) = 255.
  EXPECT_EQ(codes(q[0], 4), (std::vector<int>{0, 50, 100, 255}));
  EXPECT_EQ(half_at(q[0].contiguous(), 4), 8479);
  EXPECT_EQ(half_at(q[0].contiguous(), 6), 0);
  // Row 1: offset fp16(-0.3) = -0.300048828125 (bits 46285); scale (0.7 + 0.30005) / 255 →
  // fp16 0.0039215087890625 (bits 7172); 0.2 → rint(0.50005 / 0.0039215) = rint(127.51) = 128,
  // 0.45 → rint(190.76) = 191.
  EXPECT_EQ(codes(q[1], 4), (std::vector<int>{0, 255, 128, 191}));
  EXPECT_EQ(half_at(q[1].contiguous(), 4), 7172);
  EXPECT_EQ(half_at(q[1].contiguous(), 6), 46285);
  // Row 2: a constant row: scale 1 (bits 0x3C00 = 15360), offset -1 (0xBC00 = 48128), codes 0.
  EXPECT_EQ(codes(q[2], 4), (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(half_at(q[2].contiguous(), 4), 15360);
  EXPECT_EQ(half_at(q[2].contiguous(), 6), 48128);
  // Row 3: the offset underflows to 0 and range / 255 rounds to fp16 0, so the scale is 1.
  EXPECT_EQ(codes(q[3], 4), (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(half_at(q[3].contiguous(), 4), 15360);
  EXPECT_EQ(half_at(q[3].contiguous(), 6), 0);
}

TEST(Quint8RowwiseF16, DecodesWithinHalfAStep) {
  torch::manual_seed(3);
  const torch::Tensor values = torch::randn({64, 16}) * 0.1;
  const torch::Tensor q = quantize_quint8_rowwise_f16(values, "test");
  const torch::Tensor back = dequantize_quint8_rowwise_f16(q);
  const torch::Tensor range = std::get<0>(values.max(1)) - std::get<0>(values.min(1));
  // Each value is within half a step (range / 255, fp16-rounded) of its code, plus the fp16
  // rounding of the offset and the scale.
  EXPECT_TRUE(((back - values).abs() <= (range / 255.0 * 0.51 + 1e-3).unsqueeze(1)).all().item<bool>());
}

TEST(Quint8RowwiseF16, RefusesWhatItCannotEncode) {
  EXPECT_THROW(quantize_quint8_rowwise_f16(torch::zeros({2, 3}), "t"), ConfigError);  // 3 + 4 bytes: odd
  try {
    quantize_quint8_rowwise_f16(torch::tensor({{0.0f, 1.0f}, {std::numeric_limits<float>::infinity(), 0.0f}}),
                                "feature 'f'");
    FAIL() << "inf accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("feature 'f': row 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(quantize_quint8_rowwise_f16(torch::tensor({{-70000.0f, 0.0f}}), "t"), DataError);  // offset
  EXPECT_THROW(quantize_quint8_rowwise_f16(torch::tensor({{-60000.0f, 3e7f}}), "t"), DataError);  // scale
  EXPECT_EQ(quantize_quint8_rowwise_f16(torch::zeros({0, 4}), "t").sizes(), (std::vector<int64_t>{0, 8}));
}

}  // namespace quint8_rowwise_f16_test
}  // namespace tzrec::embedding
