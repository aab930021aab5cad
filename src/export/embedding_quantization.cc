#include "export/embedding_quantization.h"

#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"

namespace tzrec::exporting {
namespace {

constexpr int64_t kBlockRows = 1 << 16;
constexpr int64_t kInt8RowExtra = 4;  // float16 scale + float16 bias

torch::Tensor quantize_int8_block(const torch::Tensor& block) {
  const auto x = block.to(torch::kFloat32);
  const int64_t dim = x.size(1);
  // Scale and bias rounded to float16 first, so that the codes are computed against exactly the
  // values the reader will use.
  auto bias = std::get<0>(x.min(1, /*keepdim=*/true)).to(torch::kHalf);
  auto range = std::get<0>(x.max(1, /*keepdim=*/true)) - bias.to(torch::kFloat32);
  auto scale = (range / 255.0).to(torch::kHalf);
  const auto scale_f = scale.to(torch::kFloat32);
  const auto safe_scale = torch::where(scale_f > 0, scale_f, torch::ones_like(scale_f));
  auto codes = ((x - bias.to(torch::kFloat32)) / safe_scale).round().clamp(0, 255);
  codes = torch::where(scale_f > 0, codes, torch::zeros_like(codes)).to(torch::kUInt8);
  auto out = torch::empty({x.size(0), dim + kInt8RowExtra}, torch::kUInt8);
  out.narrow(1, 0, dim).copy_(codes);
  out.narrow(1, dim, 2).copy_(scale.contiguous().view(torch::kUInt8).view({x.size(0), 2}));
  out.narrow(1, dim + 2, 2).copy_(bias.contiguous().view(torch::kUInt8).view({x.size(0), 2}));
  return out;
}

torch::Tensor halves(const torch::Tensor& stored, int64_t col) {
  return stored.narrow(1, col, 2).contiguous().view(torch::kHalf).to(torch::kFloat32);  // [rows, 1]
}

}  // namespace

std::string quant_name(EmbeddingQuant quant) {
  switch (quant) {
    case EmbeddingQuant::kFp32: return "FP32";
    case EmbeddingQuant::kFp16: return "FP16";
    case EmbeddingQuant::kInt8: return "INT8";
  }
  return "?";
}

EmbeddingQuant parse_quant_emb(const char* value) {
  if (value == nullptr) return EmbeddingQuant::kInt8;
  const std::string v(value);
  if (v == "INT8") return EmbeddingQuant::kInt8;
  if (v == "FP16") return EmbeddingQuant::kFp16;
  if (v == "FP32" || v == "0") return EmbeddingQuant::kFp32;
  if (v == "INT4" || v == "INT2") {
    throw NotSupportedError(fmt::format(
        "QUANT_EMB={} (embedding quantization to {}); use INT8 (the default), FP16 or FP32", v, v));
  }
  throw UsageError(fmt::format(
      "QUANT_EMB={} is not a known embedding quantization; use INT8 (the default), FP16, FP32 or 0 "
      "(no quantization)", v));
}

EmbeddingQuant quant_emb_from_environment() { return parse_quant_emb(std::getenv("QUANT_EMB")); }

torch::Tensor quantize_table(const torch::Tensor& weight, EmbeddingQuant quant) {
  TORCH_CHECK(weight.dim() == 2, "quantize_table: weight must be [rows, dim]");
  torch::NoGradGuard no_grad;
  const auto w = weight.detach().cpu();
  if (quant == EmbeddingQuant::kFp32) return w.to(torch::kFloat32).contiguous();
  if (quant == EmbeddingQuant::kFp16) return w.to(torch::kHalf).contiguous();
  const int64_t rows = w.size(0);
  auto out = torch::empty({rows, w.size(1) + kInt8RowExtra}, torch::kUInt8);
  for (int64_t begin = 0; begin < rows; begin += kBlockRows) {
    const int64_t n = std::min(kBlockRows, rows - begin);
    out.narrow(0, begin, n).copy_(quantize_int8_block(w.narrow(0, begin, n)));
  }
  return out;
}

torch::Tensor dequantize_table(const torch::Tensor& stored, EmbeddingQuant quant, int64_t dim,
                               const std::string& name) {
  const auto expected_dtype = quant == EmbeddingQuant::kFp32   ? torch::kFloat32
                              : quant == EmbeddingQuant::kFp16 ? torch::kHalf
                                                               : torch::kUInt8;
  const int64_t expected_cols = quant == EmbeddingQuant::kInt8 ? dim + kInt8RowExtra : dim;
  if (stored.scalar_type() != expected_dtype || stored.dim() != 2 || stored.size(1) != expected_cols) {
    throw CheckpointError(fmt::format(
        "exported table '{}' is stored as {} [{}] but {} storage of a table of dim {} needs {} [rows, {}]; "
        "the export directory does not match its pipeline.config: export the model again",
        name, c10::toString(stored.scalar_type()), fmt::join(stored.sizes().vec(), ", "), quant_name(quant), dim,
        c10::toString(expected_dtype), expected_cols));
  }
  torch::NoGradGuard no_grad;
  if (quant != EmbeddingQuant::kInt8) return stored.to(torch::kFloat32).contiguous();
  const int64_t rows = stored.size(0);
  auto out = torch::empty({rows, dim}, torch::kFloat32);
  for (int64_t begin = 0; begin < rows; begin += kBlockRows) {
    const int64_t n = std::min(kBlockRows, rows - begin);
    const auto block = stored.narrow(0, begin, n);
    out.narrow(0, begin, n).copy_(block.narrow(1, 0, dim).to(torch::kFloat32) * halves(block, dim) +
                                  halves(block, dim + 2));
  }
  return out;
}

}  // namespace tzrec::exporting
