// QUint8RowwiseF16: affine uint8 quantization of embedding rows, each row stored as its D uint8
// codes, then its scale and its offset as IEEE half floats (little endian) — D + 4 bytes
// (nvembedding's format, FBGEMM's fused rowwise int8 encoding with fp16 scale and bias), as
// TorchEasyRec's quant_util writes it for delta embedding dumps (delta_embedding_dump_config
// quant_type DELTA_EMBEDDING_QUANT_INT8) and distributed sparse export.
//
// Per row x (float32): offset = fp16(min x); range = max x − offset (float32); scale = range / 255
// (1 when range is 0), rounded to fp16, and 1 if that rounds to 0; code = clamp(rint((x − offset)
// / scale), 0, 255). Decoded as code · scale + offset.
#pragma once

#include <string>

#include <torch/torch.h>

namespace tzrec::embedding {

// values: [K, D] float32, D even (D + 4 bytes per row must be even). Returns [K, D + 4] uint8.
// A value that is not finite, a row minimum outside the finite fp16 range, or a row whose scale
// would not be a finite fp16 → tzrec::DataError naming `what` and the row (its index in values).
torch::Tensor quantize_quint8_rowwise_f16(const torch::Tensor& values, const std::string& what);

// The inverse: rows [K, D + 4] uint8 → [K, D] float32.
torch::Tensor dequantize_quint8_rowwise_f16(const torch::Tensor& rows);

}  // namespace tzrec::embedding
