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

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tzrec::checkpointing {

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

// ---- Partial reads: the header alone, then byte ranges of single tensors (pread, no full load).

// One tensor of a file: its bytes are [begin, end) of the data buffer.
struct SafetensorsEntry {
  torch::ScalarType dtype = torch::kFloat32;
  std::vector<int64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

struct SafetensorsHeader {
  std::string path;
  uint64_t data_start = 0;  // file offset of the data buffer (8 + header length)
  std::map<std::string, SafetensorsEntry> tensors;
  std::map<std::string, std::string> metadata;  // "__metadata__" (empty when absent)
};

// Reads and validates the header of a file exactly as load_safetensors does (same errors, all
// CheckpointError), reading no tensor bytes. The only check left to the readers below is the
// BOOL byte check, done on the bytes they read.
SafetensorsHeader read_safetensors_header(const std::string& path);

// The readers below open header.path and pread only the bytes of the requested range. A tensor
// is addressed as a matrix of rows x columns: rows are dim 0 (a 0-D tensor is one row) and a row
// is everything after dim 0 (1-D: one element; 2-D: dim 1). An unknown name, a range outside the
// tensor, a short read (file changed since the header was read) or a BOOL byte other than 0/1
// throws CheckpointError naming the file and the tensor.

// The whole tensor (one pread): CPU, contiguous, owned.
torch::Tensor read_safetensors_tensor(const SafetensorsHeader& header, const std::string& name);

// Rows [row_begin, row_begin + rows) of a tensor with dim >= 1: [rows, shape[1:]...].
torch::Tensor read_safetensors_rows(const SafetensorsHeader& header, const std::string& name,
                                    int64_t row_begin, int64_t rows);

// Rows [row_begin, +rows) x columns [col_begin, +cols) of a 2-D tensor: [rows, cols].
torch::Tensor read_safetensors_block(const SafetensorsHeader& header, const std::string& name,
                                     int64_t row_begin, int64_t rows, int64_t col_begin,
                                     int64_t cols);

// The matrix-view block of shape out.sizes() starting at (row_begin, col_begin) written into
// `out`: a 2-D CPU tensor of the entry's dtype whose rows are contiguous (out.stride(1) == 1 or
// out.size(1) <= 1), typically a slice of a larger tensor. Full-width contiguous ranges are one
// pread; narrower column ranges are read per row, or in chunks of whole rows (bounded buffer)
// when the skipped bytes between rows are small.
void read_safetensors_block_into(const SafetensorsHeader& header, const std::string& name,
                                 int64_t row_begin, int64_t col_begin, const torch::Tensor& out);

// "F32", "BF16", ... for a supported dtype; throws CheckpointError otherwise.
std::string safetensors_dtype_name(torch::ScalarType dtype);

}  // namespace tzrec::checkpointing
