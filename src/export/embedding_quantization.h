// Embedding-table storage in an export directory, chosen by the environment variable QUANT_EMB as
// in TorchEasyRec's export (docs/tzrec-compatibility.md §3.3): unset or "INT8" → INT8 (the
// default), "FP16", "FP32" or "0" → float32 (quantization off). "INT4" / "INT2" are not supported
// yet.
//
// INT8 is row-wise asymmetric quantization with the scale and bias of each row stored after its
// codes, the row layout of FBGEMM's INT8 embedding tables: a table [rows, dim] is stored as uint8
// [rows, dim + 4] where bytes [0, dim) are the codes q, bytes [dim, dim + 2) the float16 scale and
// bytes [dim + 2, dim + 4) the float16 bias (little-endian), and a value reads back as
// q * scale + bias. scale = (max - min) / 255 and bias = min of the row, both rounded to float16
// first; the codes are then round((x - bias) / scale) clamped to [0, 255], so that the error of a
// value is at most scale / 2 plus the float16 rounding of the row's range ends. A constant row
// stores scale 0 and reads back as its float16-rounded value.
#pragma once

#include <string>

#include <torch/torch.h>

namespace tzrec::exporting {

enum class EmbeddingQuant { kFp32, kFp16, kInt8 };

// "FP32", "FP16", "INT8".
std::string quant_name(EmbeddingQuant quant);
// From a QUANT_EMB value (nullptr: unset → INT8). Unknown values → tzrec::UsageError listing the
// accepted ones; INT4 / INT2 → tzrec::NotSupportedError.
EmbeddingQuant parse_quant_emb(const char* value);
// parse_quant_emb(getenv("QUANT_EMB")).
EmbeddingQuant quant_emb_from_environment();

// The stored form of a table weight [rows, dim] (float32 or float16): float32, float16, or the
// uint8 [rows, dim + 4] rows above. Works through the table in blocks of rows.
torch::Tensor quantize_table(const torch::Tensor& weight, EmbeddingQuant quant);
// The float32 [rows, dim] values of a stored table. Throws tzrec::CheckpointError naming `name`
// when the stored tensor's dtype or shape does not fit `quant` and `dim`.
torch::Tensor dequantize_table(const torch::Tensor& stored, EmbeddingQuant quant, int64_t dim,
                               const std::string& name);

}  // namespace tzrec::exporting
