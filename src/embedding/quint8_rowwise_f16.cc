#include "embedding/quint8_rowwise_f16.h"

#include <cmath>
#include <cstring>

#include <c10/util/Half.h>
#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::embedding {
namespace {

constexpr float kHalfMax = 65504.0f;

uint16_t half_bits(float value) { return c10::Half(value).x; }
float half_value(uint16_t bits) { return static_cast<float>(c10::Half(bits, c10::Half::from_bits())); }

}  // namespace

torch::Tensor quantize_quint8_rowwise_f16(const torch::Tensor& values_in, const std::string& what) {
  TORCH_CHECK(values_in.dim() == 2, "quantize_quint8_rowwise_f16: values must be [K, D]");
  const torch::Tensor values = values_in.to(torch::kFloat32).contiguous();
  const int64_t rows = values.size(0), dim = values.size(1);
  if ((dim + 4) % 2 != 0) {
    throw ConfigError(fmt::format("{}: QUint8RowwiseF16 rows are embedding_dim + 4 bytes and must be even, but "
                                  "embedding_dim is {}",
                                  what, dim));
  }
  torch::Tensor out = torch::empty({rows, dim + 4}, torch::kUInt8);
  const float* src = values.data_ptr<float>();
  uint8_t* dst = out.data_ptr<uint8_t>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = src + r * dim;
    uint8_t* o = dst + r * (dim + 4);
    float lo = dim > 0 ? x[0] : 0.0f, hi = lo;
    for (int64_t j = 0; j < dim; ++j) {
      if (!std::isfinite(x[j])) {
        throw DataError(fmt::format("{}: row {} holds a value that is not finite ({}); QUint8RowwiseF16 needs "
                                    "finite values",
                                    what, r, x[j]));
      }
      lo = std::min(lo, x[j]);
      hi = std::max(hi, x[j]);
    }
    if (std::fabs(lo) > kHalfMax) {
      throw DataError(fmt::format("{}: row {} offset {} is outside the finite float16 range", what, r, lo));
    }
    const uint16_t offset_bits = half_bits(lo);
    const float offset = half_value(offset_bits);
    const double range64 = static_cast<double>(hi) - static_cast<double>(offset);
    if (range64 != 0 && (!std::isfinite(range64) || std::fabs(range64) > static_cast<double>(kHalfMax) * 255.0)) {
      throw DataError(fmt::format("{}: row {} scale {} is outside the finite float16 range", what, r, range64 / 255.0));
    }
    const float range = hi - offset;
    float scale = range != 0.0f ? range / 255.0f : 1.0f;
    scale = half_value(half_bits(scale));
    if (scale == 0.0f) scale = 1.0f;
    const uint16_t scale_bits = half_bits(scale);
    for (int64_t j = 0; j < dim; ++j) {
      const float q = std::nearbyint((x[j] - offset) / scale);  // rint: ties to even
      o[j] = static_cast<uint8_t>(std::min(255.0f, std::max(0.0f, q)));
    }
    std::memcpy(o + dim, &scale_bits, 2);  // little endian on the hosts this engine runs on
    std::memcpy(o + dim + 2, &offset_bits, 2);
  }
  return out;
}

torch::Tensor dequantize_quint8_rowwise_f16(const torch::Tensor& rows_in) {
  TORCH_CHECK(rows_in.dim() == 2 && rows_in.size(1) >= 4 && rows_in.scalar_type() == torch::kUInt8,
              "dequantize_quint8_rowwise_f16: rows must be [K, D + 4] uint8");
  const torch::Tensor rows = rows_in.contiguous();
  const int64_t k = rows.size(0), dim = rows.size(1) - 4;
  torch::Tensor out = torch::empty({k, dim}, torch::kFloat32);
  const uint8_t* src = rows.data_ptr<uint8_t>();
  float* dst = out.data_ptr<float>();
  for (int64_t r = 0; r < k; ++r) {
    const uint8_t* row = src + r * (dim + 4);
    uint16_t scale_bits = 0, offset_bits = 0;
    std::memcpy(&scale_bits, row + dim, 2);
    std::memcpy(&offset_bits, row + dim + 2, 2);
    const float scale = half_value(scale_bits), offset = half_value(offset_bits);
    for (int64_t j = 0; j < dim; ++j) dst[r * dim + j] = static_cast<float>(row[j]) * scale + offset;
  }
  return out;
}

}  // namespace tzrec::embedding
