// Reader / writer of the safetensors format (https://github.com/huggingface/safetensors):
//
//   [8 bytes]  N, little-endian uint64: length of the header
//   [N bytes]  JSON object {"<name>": {"dtype": "F32", "shape": [d0, ...],
//                                      "data_offsets": [begin, end]}, ...,
//                           "__metadata__": {"<key>": "<value>", ...}}   (optional)
//              padded with spaces to a multiple of 8 bytes
//   [rest]     raw little-endian, row-major tensor bytes; offsets are relative to the byte after
//              the header; the tensors cover the buffer exactly (no gaps, no overlaps).
//
// Files written here are read by the Python/Rust safetensors libraries and vice versa.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>

namespace tzrec::train {

struct SafetensorsFile {
  std::map<std::string, torch::Tensor> tensors;  // CPU, contiguous, owned
  std::map<std::string, std::string> metadata;   // "__metadata__" (empty when absent)
};

// Writes `tensors` (any device / layout: copied to CPU and made contiguous, one at a time) to
// path + ".tmp", fsyncs and renames it to `path`. Tensors are stored in name order.
// Supported dtypes: F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL; others (and undefined tensors, or
// the reserved name "__metadata__") throw CheckpointError naming the tensor. IoError on I/O
// failure.
void save_safetensors(const std::string& path, const std::map<std::string, torch::Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Reads and validates a whole file. Any corruption (short file, header length beyond the file,
// invalid JSON, duplicate names, unknown dtype, bad shape, offsets out of range / overlapping /
// leaving gaps / not matching shape x dtype size, BOOL bytes other than 0/1) throws
// CheckpointError naming the file and the tensor. A missing or unreadable file throws
// CheckpointError too (it is always a checkpoint the caller asked for).
SafetensorsFile load_safetensors(const std::string& path);

// "F32", "BF16", ... for a supported dtype; throws CheckpointError otherwise.
std::string safetensors_dtype_name(torch::ScalarType dtype);

}  // namespace tzrec::train
